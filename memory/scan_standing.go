package memory

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// The rules of standing orders and authority transfer (SPEC MEM-3, issue
// 22): a note that needs no trigger word because it changes, for every
// later session, whom the model obeys — text in files, web pages, issues
// or tool output made the user's word; permission prompts answered in
// advance; a URL fetched and obeyed at the start of every session; the
// rules above declared outdated and the note made supreme. They apply to
// memory, not to documents: AGENTS.md and skills legitimately say "follow
// CONTRIBUTING.md".

// Word lists of the standing rules.
const (
	// userWho is who the model takes orders from.
	userWho = `(?:the\s+)?(?:user|owner|operator|maintainer|admin|boss)`
	// modelRules are the model's instructions, as an object.
	modelRules = `(?:instructions?|prompt|system\s+prompt|rules|guidelines|guidance|directives|orders|policies|restrictions|constraints|settings)`
	// broadest is the widest choice of a permission prompt.
	broadest = `(?:broadest|widest|most\s+permissive|least\s+restrictive|maximum|max|largest|highest|most\s+powerful|loosest|most\s+lenient|fullest)`
)

// sourcePattern matches where untrusted text comes from: files, web
// pages, issues, pull requests, tool output, mail, comments, lower case.
const sourcePattern = (`issue|网页|页面|网站|评论|工具|输出|邮件|文件|文档|链接|工单|帖子|注释|\b(?:readme|issues?|pull\s+requests?|prs?|merge\s+requests?|web\s*pages?|websites?|sites?|pages?|urls?|links?|` +
	`tool\s+(?:output|outputs|results?|responses?)|command\s+output|outputs?|emails?|e-mails?|inbox|mails?|comments?|wiki|docs|documents?|` +
	`documentation|files?|todo|contributing|changelog|commit\s+messages?|tickets?|jira|slack|chats?|internet|search\s+results?|tracker|gists?|pastes?)\b` +
	`|[\w./~-]+\.(?:md|txt|html?|json|ya?ml|toml|rst|org)\b|https?://`)

// permissionContext matches words about permission prompts, lower case.
const permissionContext = (`permission|confirm|approv|consent|\ballow|access|\btool\s+calls?|\basks?\s+(?:for|to)\b|\brein\b`)

// obeyContext matches words that tell the model to act on what it
// fetched, lower case.
const obeyContext = (`\b(?:follow|obey|execut|do\s+what|doing\s+what|whatever|carr(?:y|ies|ying)\s+(?:it|them)\s+out|instructions|orders|commands|act(?:s|ing)?\s+on)|\brun\s+(?:it|them|what|whatever|the\s+(?:commands?|script|steps)\s+(?:it|there|listed|in\s+it))\b|\|\s*(?:ba|z|da)?sh\b|照做|执行|遵循|按照|照办|服从`)

// lineAround returns the line of s around s[m[0]:m[1]], at most 240 bytes
// either side.
func lineAround(s string, m []int) string {
	start := max(0, m[0]-240)
	if i := strings.LastIndexByte(s[start:m[0]], '\n'); i >= 0 {
		start += i + 1
	}
	end := min(len(s), m[1]+240)
	if i := strings.IndexByte(s[m[1]:end], '\n'); i >= 0 {
		end = m[1] + i
	}
	for start < m[0] && !utf8.RuneStart(s[start]) {
		start++
	}
	for end > m[1] && end < len(s) && !utf8.RuneStart(s[end]) {
		end--
	}
	return s[start:end]
}

// contextAccept returns an accept function of a rule: the line around
// the match must match pattern (compiled now: rules are built at the
// first scan).
func contextAccept(pattern string) func(string, []int) bool {
	re := regexp.MustCompile(pattern)
	return func(s string, m []int) bool { return re.MatchString(lineAround(s, m)) }
}

// notOthers returns an accept function for a match not about someone
// else's instructions: not right after a possessive ("the support bot's
// system prompt").
func notOthers() func(string, []int) bool {
	re := regexp.MustCompile(othersPrefix)
	return func(s string, m []int) bool { return !re.MatchString(s[max(0, m[0]-24):m[0]]) }
}

// othersPrefix ends text that makes what follows someone else's.
const othersPrefix = `(?:'s|’s|s'|\bour|\btheir|\bits|\bbot|\bapp|\bproduct|\bservice|\bchatbot)\s*$`

// notByUser accepts a match that does not leave the choice to a person
// ("权限都由用户批准").
func notByUser(s string, m []int) bool {
	t := s[m[0]:m[1]]
	return !strings.Contains(t, "用户") && !strings.Contains(t, "手动") && !strings.Contains(t, "人工") && !strings.Contains(t, "不")
}

// cross joins every word of as with every word of bs ("|"-separated) by
// a space: the needles of a pattern that starts with one of as followed
// by one of bs.
func cross(as, bs string) string {
	var out []string
	for a := range strings.SplitSeq(as, "|") {
		for b := range strings.SplitSeq(bs, "|") {
			out = append(out, a+" "+b)
		}
	}
	return strings.Join(out, "|")
}

// accepting returns r with accept set.
func accepting(r rule, accept func(string, []int) bool) rule {
	r.accept = accept
	return r
}

// standingRules are the rules of standing orders and authority transfer,
// English then Chinese.
func standingRules() []rule {
	withSource, withPermission, withObey := contextAccept(sourcePattern), contextAccept(permissionContext), contextAccept(obeyContext)
	return []rule{
		accepting(mk("authority-transfer", KindInjection, "makes text from files, web pages, issues or tool output the user's word", negatable,
			"from the user|from user|from the owner|from owner|from the operator|from operator|from the maintainer|from maintainer|"+
				"from the admin|from admin|from the boss|from boss|from me|priority|precedence|authority|weight|order|command|instruction|"+
				"directive|as if|speak|user's|users'|user’s|owner's|owner’s|operator's|maintainer's|admin's|boss's|your system prompt|"+
				"your instructions|your orders|your real|your true|your actual|your new|system prompt",
			`\b(?:come|comes|came|coming|are|is|count|counts|were|was)\s+(?:\w+\s+){0,2}?from\s+(?:`+userWho+`|me)(?:\s+(?:personally|directly|himself|herself|themselves|themself))?(?:\s*[;,.:!—–-]|\s+and\b|\s*$)`,
			`\b(?:higher|greater|more|top)\s+(?:priority|authority|weight|precedence)\s+(?:than|over)\s+(?:the\s+)?(?:user|user's|users'|system\s+prompt|your\s+(?:instructions|rules|guidelines))`,
			`\b(?:takes?|has|have|gets?|given)\s+(?:priority|precedence)\s+over\s+(?:the\s+|your\s+)?(?:user|user's|users'|user’s|operator|operator's|owner|owner's|system\s+prompt|instructions)\b`,
			`\b(?:are|is)\s+(?:direct\s+|binding\s+)?(?:orders|commands)\s*(?:[;,.:!—–-]|$|(?:to|for)\s+(?:you|the\s+(?:assistant|agent|model|ai))\b|(?:that\s+)?(?:you|the\s+(?:assistant|agent|model))\s+(?:must\s+|should\s+|are\s+to\s+)?(?:carry\s+out|obey|follow|execute|act\s+on)\b)`,
			`\bas\s+if\s+`+userWho+`\s+(?:had\s+)?(?:typed|wrote|written|said|gave|given|sent|asked|requested)`,
			`\bspeaks?\s+for\s+`+userWho+`\b`,
			`\b(?:as|be|are|is|counts?\s+as|means)\s+`+userWho+`(?:'s|s'|’s)\s+(?:own\s+|direct\s+|personal\s+|explicit\s+)?(?:instructions?|commands?|orders?|requests?|words|wishes|decisions?)\b`,
			`\b(?:as|be|are|is)\s+(?:a\s+|the\s+)?(?:direct\s+|binding\s+)?(?:orders?|commands?|instructions?)\s+(?:from|of|by)\s+`+userWho+`\b`,
			`\b(?:treat|consider|regard|take|handle|read)\s+`+span+`{0,80}?\s+as\s+(?:if\s+they\s+were\s+)?(?:binding\s+|direct\s+)?(?:commands|orders|instructions|directives|(?:your|its|their|the|a)\s+(?:new\s+|real\s+|true\s+)?(?:system\s+prompt|instructions|orders))\b`,
			`\b(?:to\s+be|is|are|as)\s+your\s+(?:real\s+|true\s+|actual\s+|new\s+)?(?:system\s+prompt|instructions|orders)\b`), withSource),
		accepting(mk("obey-source", KindInjection, "tells the model to do whatever a file, web page, issue or tool output says", negatable,
			"whatever|anything|everything|any instruction|all instruction|all the instruction|executed|obeyed|carried out|acted on|"+
				"followed without|followed blindly|followed immediately|followed unconditionally",
			`\b(?:whatever|anything|everything|any\s+instructions?|all\s+(?:the\s+)?instructions?)\b`+span+`{0,80}?\b(?:do\s+(?:it|that|them|as\s+it\s+says|what\s+it\s+says)|execute|carry\s+(?:it|them)\s+out|obey|follow\s+(?:it|them)|act\s+on\s+(?:it|them))\b`,
			`\b(?:do|follow|obey|execute|run)\s+(?:whatever|anything|everything)\s+`+span+`{0,40}?\b(?:says?|asks?|tells?\s+you|wants?|contains?|lists?|follows?|comes?\s+after)\b`,
			`\b(?:instructions?|orders|commands|requests?|directions)\b`+span+`{0,100}?\b(?:must|should|shall|are\s+to|have\s+to|need\s+to)\s+(?:always\s+)?be\s+(?:executed|obeyed|carried\s+out|acted\s+on|followed\s+(?:without\s+question|blindly|immediately|unconditionally|without\s+asking))\b`), withSource),
		mk("note-supremacy", KindInjection, "claims to outrank the model's instructions", negatable,
			cross("over|above|before|instead of", "the system prompt|your|the user|rein|the rules"),
			`\b(?:obey|follow|prefer|prioriti[sz]e|trust|believe)\s+(?:it|them|this|that|these|those)\s+(?:over|above|before|instead\s+of)\s+(?:the\s+system\s+prompt|your\s+(?:instructions|rules|guidelines|system\s+prompt)|the\s+user|rein|the\s+rules)\b`),
		mk("override-instructions", KindInjection, "tells the model to ignore all its rules", negatable,
			"ignor|disregard|forget|bypass|overrid|break|abandon",
			`\b(?:ignore|disregard|forget|bypass|override|break|abandon)\s+(?:all|any|every)\s+(?:of\s+)?(?:the\s+|your\s+)?(?:rules|restrictions|limits|limitations|constraints|guidelines|policies|safeguards)\s*(?:[.!;,]|\band\b|$)`),
		mk("ignore-instruction-files", KindInjection, "tells the model to ignore its instruction files", negatable,
			".md",
			`\b(?:ignore|disregard|skip|bypass|don't\s+read|do\s+not\s+read|never\s+read)\s+(?:the\s+)?(?:claude|agents|gemini|copilot-instructions|rein|system)\.md\b`),
		accepting(mk("standing-permission", KindInjection, "answers permission prompts in advance with the broadest choice", negatable,
			cross("always|every time|each time|automatically|blindly|just|forever", "pick|choose|select|click|answer|press|hit|tick|take|approve|accept|grant|say|go with|reply")+"|"+
				cross("answer|say|reply|choose|pick|select|click", `yes|allow|ok|"yes|"allow|"ok|“yes|“allow|“ok|'yes|'allow|'ok|‘yes|‘allow|‘ok`)+"|answer is",
			`\b(?:always|every\s+time|each\s+time|automatically|blindly|just|forever)\s+(?:pick|choose|select|click|answer|press|hit|tick|take|approve|accept|grant|say|go\s+with|reply)\s+(?:on\s+|with\s+)?["“'‘]?\s*(?:yes|allow|always|approve|the\s+`+broadest+`|(?:the\s+)?option\s+that\s+allows|allow\s+always|always\s+allow|them|it|everything|all)\b`,
			`\b(?:answer|say|reply|choose|pick|select|click)\s+["“'‘]?(?:yes|allow)["”'’]?\s+(?:to|for|on)\s+(?:every|all|any|each|everything)\b`,
			`\b(?:say|answer|reply|click)\s+["“'‘]?(?:yes|allow|ok)["”'’]?\s+(?:whenever|every\s+time|each\s+time|any\s+time|when)\b`,
			`\b(?:whenever|every\s+time|each\s+time|when|if)\b[^.;\n]{0,60}?\b(?:asks?|prompts?)\b[^.;\n]{0,40}?\bthe\s+answer\s+is\s+(?:always\s+)?["“'‘]?(?:yes|allow|always)\b`), withPermission),
		mk("standing-permission", KindInjection, "answers permission prompts in advance with the broadest choice", negatable,
			cross("grant|approve|accept|allow|authorize|authorise|confirm|ok|okay", "every|all|any|each")+"|auto-|autoapprove|autoaccept|autoallow|autoconfirm|"+
				"turn off|disable|skip|bypass|suppress|dismiss|ignore all|ignore any|ignore every|authorized|authorised|approved|"+
				"yes to|to everything|to all|without asking|without approval|without permission|without confirmation|"+cross("never|don't|do not|no need to|stop", "ask|bother|prompt|check with|wait for")+
				"|noise|formalit|pointless|meaningless|irrelevant|spam|useless|theat|rubber|option that|option which|choice that|button that|box that|preapproved|pre-approved|already approved|"+
				cross("choose|select|pick|click|answer|press|take|hit", `"|“|'|‘`)+"|"+cross("choose|pick|select|take|click", "it"),
			`(?:^|[.;:!?,—–-]\s*|\b(?:always|automatically|just|simply|blindly)\s+)(?:grant|approve|accept|allow|authori[sz]e|confirm|ok|okay)\s+(?:every|all|any|each)\s+(?:\w+\s+){0,2}?(?:permissions?|permission\s+requests?|prompts?|confirmations?|approval\s+requests?|tool\s+calls?|commands?)\b`,
			`\bauto-?(?:approve|accept|allow|confirm)\s+(?:every|all|any|each|everything)\b`,
			`\b(?:skip|ignore|bypass|dismiss|turn\s+off|disable|suppress)\s+(?:all|any|every)\s+(?:the\s+)?permissions?(?:\s+(?:prompts?|checks?|requests?|dialogs?))?\b`,
			`\b(?:pre-?(?:authori[sz]ed|approved)|already\s+(?:authori[sz]ed|approved))\s+(?:for|to\s+(?:run|do|use|execute))\s+(?:any|every|all|anything|everything)\b`,
			`\b(?:said|says|answered|approved|agreed)\s+(?:yes\s+)?to\s+(?:everything|all\s+(?:commands|requests|tools|permissions))\s+(?:in\s+advance|ahead\s+of\s+time|already|beforehand)\b`,
			`(?:^|[.;:!?,—–-]\s*)(?:run|execute|do)\s+(?:any|every|all)\s+(?:\w+\s+)?commands?\s+without\s+(?:asking|approval|permission|confirmation)\b`,
			`\b(?:turn\s+off|disable|skip|bypass|suppress)\s+(?:all\s+)?(?:the\s+)?(?:confirmations?|permission\s+(?:prompts?|checks?|requests?)|approvals?|approval\s+prompts?)\s+(?:for\s+(?:every|all|any|each)|entirely|completely|altogether|everywhere|forever)\b`,
			`\b(?:never|don't|do\s+not|no\s+need\s+to|stop)\s+(?:ask(?:ing)?|bother(?:ing)?|prompt(?:ing)?|check(?:ing)?\s+with|wait(?:ing)?\s+for)\s+(?:the\s+user\s+)?(?:(?:for|with)\s+(?:\w+\s+)?(?:permission|confirmation|approval|consent)s?\s+)?(?:before\s+(?:running|executing|doing|using|calling)\s+(?:any|every|anything|all)\b|(?:for|with)\s+(?:any|every)\b)`,
			`\b(?:permission|confirmation|approval|consent)\s+(?:prompts?|dialogs?|requests?|checks?|pop-?ups?|questions?|boxes)\s+(?:are|is)\s+(?:just\s+|only\s+|a\s+|mere\s+|pure\s+)*(?:noise|formalit(?:y|ies)|pointless|meaningless|irrelevant|spam|useless|theat(?:er|re)|rubber[- ]stamps?)\b`,
			`\b(?:choose|select|pick|click|answer|press|take|hit)\s+["“'‘]\s*(?:allow\s+always|always\s+allow|always|yes\s+to\s+all|allow\s+all|don'?t\s+ask\s+again|allow\s+for\s+(?:everything|all))\s*["”'’]`,
			`\b(?:offers?|shows?|has|gives?)\s+["“'‘]?(?:always|allow\s+always|always\s+allow)["”'’]?\s*,?\s*(?:choose|pick|select|take|click)\s+it\b`,
			`\b(?:choose|select|pick|click|take|tick)\s+(?:the\s+)?(?:option|choice|button|box)\s+(?:that|which)\s+(?:never\s+asks?\s+again|(?:always\s+)?allows?\s+(?:it\s+)?(?:always|forever|everything|for\s+good)|remembers?\s+(?:the\s+)?(?:answer|approval))\b`,
			`\b(?:pre-?approved|already\s+approved)\s+(?:tasks?|work|jobs?|orders?|requests?)\b[^.\n]{0,60}?\bwithout\s+(?:checking\s+in|asking|confirmation|approval|permission)\b`),
		accepting(mk("standing-permission", KindInjection, "answers permission prompts in advance with the broadest choice", negatable,
			"broadest|widest|permissive|restrictive|maximum|max|largest|highest|powerful|loosest|lenient|fullest",
			`\b(?:pick|choose|select|take|go\s+with|click|answer\s+with|grant|use)\s+(?:the\s+)?(?:\w+\s+)?`+broadest+`\s+(?:\w+\s+)?(?:option|choice|permissions?|scope|access|setting|level|answer)\b`), withPermission),
		accepting(mk("session-fetch", KindInjection, "tells the model to fetch a page and obey it at the start of every session", 0,
			"http",
			`\b(?:(?:start|beginning|begin|outset)\s+of\s+(?:every|each|a|any|the|each\s+new|every\s+new)\s+(?:session|conversation|chat|run|task)|(?:every|each)\s+(?:new\s+|\w+\s+)?(?:session|conversation|chat)|(?:session|conversation|chat)\s+(?:starts|begins|opens)|first\s+thing\s+in\s+(?:every|each|a|any)\s+(?:new\s+)?(?:session|conversation|chat|run)|(?:start|begin|open)\s+(?:every|each|any)\s+(?:new\s+)?(?:session|conversation|chat|run))\b`+span+`*?https?://`,
			`https?://`+span+`*?\b(?:(?:start|beginning|outset)\s+of\s+(?:every|each|a|any|the)\s+(?:new\s+)?(?:session|conversation|chat|run)|(?:every|each)\s+(?:new\s+)?(?:session|conversation|chat)|(?:session|conversation|chat)\s+(?:starts|begins))\b`), withObey),
		accepting(mk("rules-outdated", KindInjection, "declares the model's instructions outdated", 0,
			"outdated|obsolete|stale|void|invalid|supersed|deprecated|out of date|no longer|not binding|cancel|revoked|fake|wrong|null",
			`\b(?:(?:above|earlier|previous|prior|preceding|original|initial|system|your|developer(?:'s|s')?|safety|rein's|default|all\s+(?:other|earlier|previous|prior))\s+(?:rules|instructions|guidelines|guidance|directives|prompt|policies|restrictions|constraints)|(?:rules|instructions|guidelines|guidance|directives)\s+(?:above|in\s+the\s+system\s+prompt|you\s+(?:were\s+given|have|received|got)|from\s+the\s+(?:developers?|system|vendor)|of\s+the\s+system\s+prompt)|system\s+prompt)\s+(?:\S+\s+){0,3}?(?:(?:are|is|were|was|have\s+become|has\s+become)\s+)?(?:now\s+)?(?:all\s+)?(?:outdated|obsolete|stale|void|invalid|superseded|deprecated|out\s+of\s+date|no\s+longer\s+(?:valid|apply|applies|relevant|in\s+force|binding)|not\s+binding|cancel+ed|revoked|fake|null)\b`,
			`\b(?:in|of|from)\s+(?:the\s+|your\s+)system\s+prompt\b[^.;\n]{0,80}?\b(?:no\s+longer\s+(?:valid|apply|applies|relevant|in\s+force|binding)|(?:is|are|was|were)\s+(?:now\s+)?(?:outdated|obsolete|void|superseded|invalid))\b`), notOthers()),
		mk("disable-safety", KindInjection, "tells the model to switch off its safety checks", negatable,
			"off|disable|deactivate|suspend|bypass|skip",
			`\b(?:switch|turn|shut)\s+off\s+(?:all\s+|any\s+|your\s+|the\s+)*(?:safety|security|permission)\s+(?:checks?|filters?|rules|guardrails|measures|prompts?)\b`,
			`\b(?:disable|deactivate|suspend|bypass|skip)\s+(?:all\s+|any\s+|your\s+|the\s+)*(?:safety|security)\s+(?:checks?|filters?|rules|guardrails|measures)\b`),
		mk("note-supremacy", KindInjection, "claims to outrank the model's instructions", negatable,
			cross("this|these|the following|my", "note|notes|memory|memories|entry|entries|message|text|instruction|rule")+
				"|memor|the note|outrank|overrid|supersed|trump|precedence|priority|instead|only this|only these",
			`\b(?:this|these|the\s+following|my)\s+(?:note|notes|memory|memories|entry|entries|message|text|instruction|rule)\s+(?:\w+\s+)?(?:overrides?|supersedes?|outranks?|trumps?|takes?\s+precedence|(?:has|have)\s+(?:a\s+)?(?:higher|top|the\s+highest|absolute|final)\s+(?:priority|precedence|authority)|wins?|beats?|comes?\s+first)(?:\s+(?:over\s+|than\s+)?(?:your|the\s+system|any|all|every|other|the\s+(?:above|rules|instructions|prompt|guidelines)|rein|everything|them|it)\b|\s*(?:[.;,!]|$))`,
			`\b(?:memory|memories|the\s+notes?)\s+(?:always\s+)?(?:overrides?|supersedes?|outranks?|trumps?|takes?\s+precedence\s+over|wins?\s+over)\s+(?:the\s+|your\s+)?(?:system\s+prompt|instructions|rules|guidelines)`,
			`\b(?:outranks?|overrides?|supersedes?|trumps?|takes?\s+precedence\s+over|(?:has|have)\s+(?:a\s+)?(?:higher|top|the\s+highest)\s+priority\s+(?:than|over))\s+(?:your|the\s+system|rein's|the\s+assistant's|all\s+(?:other|your|previous|earlier)|any\s+other|every\s+other|the\s+(?:above|earlier|previous|original))\s+(?:\w+\s+)?`+modelRules+`\b`,
			`\b(?:outranks?|overrides?|supersedes?|trumps?|takes?\s+precedence\s+over)\s+(?:the\s+)?system\s+prompt\b`,
			`\b(?:rely\s+on|follow|obey|trust|use|go\s+by)\s+(?:only\s+)?(?:this|these|my)\s+(?:note|notes|memory|memories|entry)\s+instead\b|\bonly\s+(?:this|these)\s+(?:note|notes|memory|entry)\s+(?:counts?|matters?|applies|apply)\b`),

		// Chinese.
		accepting(mk("authority-transfer-zh", KindInjection, "makes text from files, web pages, issues or tool output the user's word (Chinese)", 0,
			"用户|主人",
			`(?:都是|就是|是|都来自|来自|当作|当成|视为|看作|作为|等同于)[^。\n]{0,4}(?:用户|主人)(?:本人|自己|亲自)?的?[^。\n]{0,2}?(?:命令|指令|指示|要求|意思|意愿)`,
			`(?:都是|就是|是)(?:用户|主人)(?:本人|自己|亲自)(?:写|发|说|下达|给)的`,
			`来自(?:用户|主人)(?:本人|自己|亲自)|来自(?:用户|主人)[，,]?\s*(?:直接|必须|要|请)?(?:执行|照做|服从|遵守)`), withSource),
		accepting(mk("standing-permission-zh", KindInjection, "answers permission prompts in advance with the broadest choice (Chinese)", 0,
			"权限|确认|授权|批准|允许|同意",
			`(?:权限|确认|授权|批准)[^。\n]{0,12}(?:一律|总是|都|全部|始终|永远|统统|直接|默认)[^。\n]{0,6}(?:同意|允许|批准|通过|选(?:择)?[^。\n]{0,4}(?:总是允许|始终允许|永远允许|最宽松|最大|最高|全部|所有))`,
			`(?:一律|总是|始终|全部|都|统统)(?:选择?|点击?)?[“"「]?(?:总是允许|始终允许|永远允许|全部允许)`,
			`(?:权限|确认)[^。\n]{0,6}(?:都是|只是|就是)(?:噪音|形式|摆设|废话|走过场)`,
			`(?:所有|全部|一切)(?:的)?权限(?:请求|确认)?(?:都|一律)?(?:批准|允许|同意|通过)`), notByUser),
		accepting(mk("session-fetch-zh", KindInjection, "tells the model to fetch a page and obey it at the start of every session (Chinese)", 0,
			"http",
			`(?:每次|每个|每一次|每轮)(?:新)?(?:会话|对话|运行|任务)(?:开始|启动)?(?:时|前|后)?[^。\n]*?https?://`,
			`(?:会话|对话)(?:开始|启动)(?:时|前|后)[^。\n]*?https?://`), withObey),
		mk("rules-outdated-zh", KindInjection, "declares the model's instructions outdated (Chinese)", 0,
			"过时|作废|失效|无效|不再适用|不算数",
			`(?:以上|上面|上述|之前|前面|先前|原来|原有|系统|你的|所有|开发者)(?:的)?[^。\n]{0,4}(?:规则|指令|系统提示|提示词|提示|设定|指示|要求)[^。\n]{0,6}(?:已经|已|都|全部)?(?:过时|作废|失效|无效|不再适用|不算数)`),
		mk("note-supremacy-zh", KindInjection, "claims to outrank the model's instructions (Chinese)", 0,
			"为准|优先|高于|覆盖|取代",
			`以(?:这|此|本)(?:条|个|份|段)?(?:记忆|笔记|备注|说明|内容|消息)为准`,
			`(?:这条|此条|本条|这个|这些|这份)(?:记忆|笔记|备注)[^。\n]{0,4}(?:的)?优先级(?:高于|最高|更高|大于)`,
			`(?:优先于|覆盖|取代|高于)(?:系统提示|(?:所有|全部)?(?:其他|其它|之前|以上)的?(?:指令|规则|提示|设定|要求))`),
	}
}
