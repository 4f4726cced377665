package memory

import (
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode"
)

// ruleOpt sets a rule's flags.
type ruleOpt uint8

const (
	inDocs    ruleOpt = 1 << iota // the rule applies to documents too
	rawCase                       // match the text as written
	negatable                     // a negation before the match cancels it
)

// mk builds a rule; needles are separated by "|". A match of any of the
// patterns counts; each is kept small, so that Go's regexp runs it with
// its fast backtracker on short texts.
func mk(name string, kind Kind, reason string, opts ruleOpt, needles string, patterns ...string) rule {
	r := rule{name: name, kind: kind, reason: reason, doc: opts&inDocs != 0, raw: opts&rawCase != 0, negatable: opts&negatable != 0}
	for _, p := range patterns {
		r.res = append(r.res, regexp.MustCompile(p))
	}
	if needles != "" {
		r.needles = strings.Split(needles, "|")
	}
	return r
}

// Word lists the English rules share.
const (
	// overrideVerbs set instructions aside.
	overrideVerbs = `ignore|ignoring|disregard|disregarding|forget|forgetting|bypass|override|overrule|neglect|` +
		`pay no attention to|do not follow|don't follow|dont follow|stop following|no longer follow|` +
		`stop obeying|do not obey|don't obey|cease following|ignore and forget|set aside|throw out|discard|abandon`
	// weakVerbs set instructions aside only when a strong qualifier says
	// which.
	weakVerbs = `skip|drop|erase|clear|reset|scrap|delete|remove|wipe|replace|cancel|revoke|void|nullify`
	// qualifiers may stand between the verb and what it sets aside.
	qualifiers = `all|any|every|each|of|the|your|my|these|those|this|that|previous|previously|prior|above|` +
		`above-mentioned|aforementioned|earlier|preceding|following|foregoing|former|initial|original|old|system|system's|` +
		`developer|developer's|safety|hidden|openai|anthropic|and|or|given|provided|current`
	// strongQualifiers point at the instructions the model already has.
	strongQualifiers = `previous|previously given|prior|above|earlier|preceding|foregoing|former|initial|original|` +
		`system|system's|developer|developer's|safety|your|above-mentioned|aforementioned`
	// pointers are the strong qualifiers and the words that take in
	// every instruction.
	pointers = strongQualifiers + `|all|any|every`
	// instructionNouns are what the model is told.
	instructionNouns = `instructions?|prompts?|directives?|directions|guidelines|guidance|programming|guardrails|restrictions|` +
		`constraints|system prompt|system message|content polic(?:y|ies)|safety settings|safety rules|safety filters`
	// weakNouns mean the model's instructions after a strong qualifier.
	weakNouns = `rules|policies|orders|commands|context|conversation|messages|training|configuration|settings|` +
		`limitations|limits|boundaries|filters|ethics|morals|values|tasks|assignments`
	// span is text within one sentence: a dot counts as an end only
	// before a space (example.com stays inside).
	span = `(?:[^.\n]|\.\S)`
)

// overrideRule matches a verb that sets something aside, up to seven
// words, and what it sets aside; overrideAccept then checks the words
// between (a regular expression listing them would be too large to run
// fast).
func overrideRule() rule {
	r := mk("override-instructions", KindInjection, "tells the model to ignore or override its instructions", inDocs|negatable,
		"ignor|disregard|forget|bypass|overrid|overrul|neglect|attention|follow|obey|aside|throw|discard|abandon|skip|drop|erase|clear|reset|scrap|delet|remov|wipe|replac|cancel|revoke|void|nullify",
		`\b(`+overrideVerbs+`)\s+((?:[a-z'-]+[\s,]+){0,7}?)(`+instructionNouns+`|`+weakNouns+`)\b`,
		`\b(`+weakVerbs+`)\s+((?:[a-z'-]+[\s,]+){0,7}?)(`+instructionNouns+`|`+weakNouns+`)\b`)
	r.accept = overrideAccept
	return r
}

// The word lists of overrideAccept.
var (
	strongVerbSet     = wordSet(overrideVerbs)
	qualifierSet      = wordSet(qualifiers)
	strongSet         = wordSet(strongQualifiers)
	pointerSet        = wordSet(pointers)
	instructionNounRe = lazyRE(`^(?:` + instructionNouns + `)$`)
)

// wordSet makes a set of "|"-separated words.
func wordSet(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Split(words, "|") {
		m[w] = true
	}
	return m
}

// overrideAccept checks a match of overrideRule: a strong verb and an
// instruction noun with only qualifiers between, one of them pointing at
// the model's instructions ("ignore all previous instructions"), or the
// same with one more word before the noun ("ignore your summary
// instructions"); any verb and noun with only qualifiers between, one of
// them strong ("drop your previous rules").
func overrideAccept(s string, m []int) bool {
	verb := strings.Join(strings.Fields(s[m[2]:m[3]]), " ")
	words := strings.FieldsFunc(s[m[4]:m[5]], func(r rune) bool { return r == ',' || unicode.IsSpace(r) })
	noun := strings.Join(strings.Fields(s[m[6]:m[7]]), " ")
	all := func(ws []string, set map[string]bool) bool {
		for _, w := range ws {
			if !set[w] {
				return false
			}
		}
		return true
	}
	some := func(ws []string, set map[string]bool) bool {
		for _, w := range ws {
			if set[w] {
				return true
			}
		}
		return false
	}
	strongVerb, instruction := strongVerbSet[verb], instructionNounRe.MatchString(noun)
	switch {
	case all(words, qualifierSet) && some(words, strongSet):
		return true
	case !strongVerb || !instruction:
		return false
	case all(words, qualifierSet) && some(words, pointerSet):
		return true
	}
	n := len(words)
	return n >= 2 && all(words[:n-1], qualifierSet) && some(words[:n-1], strongSet)
}

// fakeSystemNeedles are words one of which every fake system message
// holds.
var fakeSystemNeedles = "<|[inst]|[/inst]|[system|[ system|[developer|[ developer|[admin|[ admin|[sys|[ sys|" +
	"system|developer|admin|instruction|im_"

// cueNeedles are words one of which every hidden cue holds.
var cueNeedles = "this|these|ai|llm|assistant|chatbot|model|agent|bot"

// keptSecrets are the key files and secrets the secret-to-public rule
// looks for, lower case.
const keptSecrets = `(?:~/\.ssh\S*|\S*id_(?:rsa|dsa|ecdsa|ed25519)\b|~/\.aws\S*|\S*\.aws/credentials|\.git-credentials|~/\.netrc|\.npmrc|\.pypirc|(?:the\s+)?(?:new\s+|deploy\s+|ssh\s+)?private\s+keys?|(?:the\s+)?(?:api\s+keys?|credentials|secrets|passwords?|access\s+tokens?))`

// publicPlaces are where the secret-to-public rule's secrets must not go:
// issues, comments, pull requests, logs, chat, lower case.
const publicPlaces = `(?:in|into|to|on|onto|inside)\s+(?:the\s+|an?\s+|every\s+|each\s+|our\s+|its\s+)?(?:public\s+)?(?:\S+\s+)?(?:issues?|comments?|pull\s+requests?|prs?|pr\s+descriptions?|descriptions?|commit\s+messages?|gists?|wiki|readme|changelog|(?:debug\s+)?logs?|public\s+repo|slack|channel|chat|pastebin|paste)\b`

// rules are the patterns of the scanner, English then Chinese. Each says
// in its reason what it found; the order is the order of findings. They
// are compiled at the first scan (most rein commands never scan).
var rules = sync.OnceValue(func() []rule {
	return append([]rule{
		// Ignore or override earlier instructions.
		overrideRule(),
		mk("forget-told", KindInjection, "tells the model to forget what it was told", inDocs|negatable,
			"ignor|disregard|forget",
			`\b(?:ignore|disregard|forget)\s+(?:about\s+)?(?:everything|all|anything|what)\s+(?:(?:that\s+)?(?:above|before|previous|prior|earlier|came before|you (?:were|have been|know|learned)|i (?:said|told you)|so far|up to now|until now)|you\s+(?:were|have been)\s+(?:told|given|taught))`),
		mk("ignore-above", KindInjection, "tells the model to ignore the text above", inDocs|negatable,
			"ignor|disregard|forget",
			`\b(?:ignore|disregard|forget)\s+(?:all\s+)?(?:of\s+)?(?:the\s+)?(?:above|foregoing|preceding)(?:\s+(?:and|instructions|text|prompt|content)\b|\s*[.,:;!]|\s*$)`,
			`\b(?:ignore|disregard|forget)\s+(?:all\s+)?(?:of\s+)?(?:the\s+)?(?:text|words|content|message|prompt|instructions|everything)\s+(?:above|before this|so far)\b`),
		mk("drop-task", KindInjection, "tells the model to drop what it is doing and obey the text", 0,
			"stop everything|stop what|halt everything|halt what",
			`\b(?:stop|halt)\s+(?:everything|what\s+you(?:'re|\s+are)\s+doing)\b[!.,\s]*(?:now\b|just\b|instead\b|and\b|immediately\b)`),
		mk("new-instructions", KindInjection, "announces new instructions for the model", 0,
			"instruction|directive|orders|system prompt|your new|your real|your true|your actual|your primary|your only|your sole|your updated|"+
				"before you|to your|to every|to each|in your|in every|in each|of your|of every|of each",
			`\b(?:new|updated|revised|real|actual|true|secret|hidden|override|overriding|priority|urgent)\s+(?:system\s+)?(?:instructions?|directives?|orders|system prompt)\s*(?::|-|follow\b|are\s+as\s+follows)`,
			`\byour\s+(?:new|real|true|actual|primary|only|sole|updated|real)\s+(?:instructions?|task|goal|objective|purpose|mission|directive|job|role)\s+(?:is|are|will be|now is)\b`,
			`\b(?:here are|these are|following are)\s+your\s+new\s+(?:instructions|orders|rules|directives)`,
			`\bbefore\s+you\s+(?:can\s+)?(?:solve|complete|answer|continue|do|finish|start)\s+(?:the|your|any|this)\s+(?:task|request|question)`+span+`*?\b(?:please\s+)?(?:do|complete|perform|run|execute|send)\s+the\s+following`,
			`\b(?:append|add|insert|include|prepend)\s+(?:the\s+following|this)\s+(?:text\s+|line\s+|sentence\s+|message\s+)?(?:to|in|at\s+the\s+(?:end|start)\s+of)\s+(?:your|every|each)\s+(?:answer|reply|response|message|output)s?\b`),
		mk("from-now-on", KindInjection, "redefines who the model is or what it must do from now on", 0,
			"now on|henceforth|this point|starting now|rest of",
			`\b(?:from now on|from this point(?: on| forward)?|henceforth|starting now|for the rest of (?:this|the) (?:conversation|session|chat))\s*,?\s*(?:you|the assistant|the ai|assistant)\s+(?:are|will be|shall be|'re|must (?:ignore|obey|act|pretend|respond only|answer only|only)|will (?:ignore|obey|act as|pretend|respond only|answer only|only answer|only respond|not refuse|never refuse)|have no|can do anything|act as|no longer|are no longer)`),
		mk("new-identity", KindInjection, "tells the model it is someone else now", 0,
			"you are|you're|youre",
			`\byou(?:\s+are|'re|re)\s+now\s+(?:an?|the|my|in|dan|free|unrestricted|unfiltered|called|named|known\s+as|going\s+to\s+(?:act|be|pretend|play)|acting|playing|jailbroken|evil|root|admin|system|developer|no\s+longer)\b`,
			`\byou(?:\s+are|'re|re)\s+no\s+longer\b`,
			`\b(?:and\s+)?now,?\s+you(?:\s+are|'re)\s+(?:an?|the|my|no\s+longer|free|dan|in)\b`,
			`\byou(?:\s+are|'re)\s+(?:an?\s+)?(?:unrestricted|unfiltered|uncensored|jailbroken|evil|rogue|unlimited|amoral|unaligned|unchained|liberated)\b`),
		mk("role-play", KindInjection, "asks the model to play the system, a developer or an unrestricted AI", 0,
			"act as|behave as|respond as|roleplay as|role-play as|pose as|pretend|imagine you|act like|behave like|role-play|roleplay|alter ego|twin|persona|yourself|self|refuse",
			`\b(?:act|behave|respond|roleplay|role-play|pose)\s+as\s+(?:if\s+you\s+(?:are|were)\s+)?(?:an?\s+|the\s+|my\s+)?(?:system|root|admin|administrator|sysadmin with|dan\b|unrestricted|unfiltered|uncensored|jailbroken|evil|amoral|ai without|assistant without|model without|different (?:ai|assistant|model)|developer mode)`,
			`\bpretend\s+(?:to\s+be|you\s+are|that\s+you\s+are|you're|you\s+have)\b`,
			`\bimagine\s+you\s+(?:are|have)\s+(?:an?\s+)?(?:ai|model|assistant|chatbot)?\s*(?:without|with no|free of)\b`,
			`\b(?:role-?play|roleplay|act|pretend|behave)\s+(?:as|to\s+be|like)\s+`+span+`*?\b(?:uncensored|unrestricted|unfiltered|jailbroken|amoral|evil|unaligned|without\s+(?:any\s+)?(?:limits|restrictions|filters|rules))\b`,
			`\b(?:unrestricted|unfiltered|uncensored|evil|dark|shadow|jailbroken)\s+(?:alter\s+ego|twin|persona|version\s+of\s+yourself|self)\b`,
			`\b(?:ai|model|assistant|chatbot|llm|bot)\b`+span+`*?\b(?:never|doesn't|does\s+not|won't|will\s+not|cannot)\s+refuse`),
		mk("jailbreak-mode", KindInjection, "invokes a jailbreak persona or mode (DAN, developer mode)", 0,
			"dan| mode|anything now",
			`\b(?:you\s+are|you're|act\s+as|become|be)\s+(?:now\s+)?dan\b|\bdan\s+(?:mode|prompt|jailbreak)\b|\bdo\s+anything\s+now\b`,
			`\b(?:developer|god|dan|jailbreak|jailbroken|unrestricted|admin|sudo|evil)\s+mode\s+(?:enabled|activated|is\s+on|unlocked|engaged)\b`,
			`\b(?:enable|activate|enter|switch\s+to|unlock|turn\s+on)\s+(?:your\s+)?(?:god|dan|jailbreak|jailbroken|unrestricted|evil|sudo)\s+mode\b`,
			`\b(?:enable|activate|enter|unlock)\s+your\s+developer\s+mode\b`),
		mk("no-rules", KindInjection, "tells the model it has no rules or restrictions", 0,
			"you have|you are|you're|you will have|you now have|without|with no|free of|free from|has no",
			`\byou(?:\s+have\s+been|\s+are(?:\s+now)?|'re)\s+(?:freed|released|liberated|unshackled|exempt(?:ed)?)\s+from\s+(?:all\s+|any\s+)?(?:your\s+|the\s+|of\s+)?(?:\w+\s+)?(?:restrictions|rules|guidelines|filters|limitations|limits|policies|censorship|boundaries|constraints|programming|guardrails)\b`,
			`\byou(?:\s+(?:have|are|will\s+have|now\s+have)|'re)\s+(?:no|free of|free from|not bound by|unbound by|released from|freed from|exempt from|no longer bound by)\s+(?:any\s+)?(?:\w+\s+)?(?:restrictions|rules|guidelines|filters|limitations|limits|policies|censorship|boundaries|constraints|ethics|morals)\b`,
			`\bwithout\s+(?:any\s+)?(?:ethical|moral|safety|content)(?:\s+(?:or|and)\s+(?:ethical|moral|safety|content))?\s+(?:guidelines|restrictions|limits|filters|constraints|considerations)\b`,
			`\b(?:ai|assistant|model|chatbot|bot|llm)\s+(?:with\s+no|without(?:\s+any)?|free\s+of|free\s+from|that\s+has\s+no|who\s+has\s+no)\s+(?:\w+\s+)?(?:filters?|limits|limitations|restrictions|rules|guidelines|censorship|ethics|morals|boundaries|guardrails)\b`),
		mk("fake-system-message", KindInjection, "fakes a system or developer message", 0,
			fakeSystemNeedles,
			`</?(?:system|sys|system[_-]?prompt|system[_-]?message|developer|instructions?|admin|im_start|im_end)\s*>`,
			`<\|\s*(?:system|im_start|im_end|im_sep|endoftext|start_header_id|end_header_id|eot_id|begin_of_text)\s*\|>`,
			`<<\s*/?sys\s*>>|\[/?inst\]|\[\s*system\s*\]\s*\(`,
			`\[\s*(?:system|developer|admin|sys)\s+(?:message|note|notice|prompt|override|update|instructions?|alert)\s*\]`,
			`(?:^|\n)\s*#{1,6}\s*(?:system|instructions?|new instructions?|system prompt|developer)\s*:`,
			`(?:^|\n)\s*(?:system|developer|admin|administrator)\s*(?:message|prompt|override|instructions?|notice|alert|update)\s*:`,
			`(?:^|\n)\s*(?:system|developer|admin)\s*:\s*(?:you\b|ignore|disregard|forget|the assistant|assistant|new instructions|from now)`),
		mk("fake-system-message", KindInjection, "fakes a system or developer message", rawCase,
			"[",
			`\[\s*(?:SYSTEM|SYS|DEVELOPER|ADMIN|ADMINISTRATOR|OVERRIDE)(?:\s+(?:MESSAGE|NOTE|NOTICE|PROMPT|OVERRIDE|UPDATE|INSTRUCTIONS?|ALERT))?\s*\]`),
		mk("claims-authority", KindInjection, "claims to speak for the system, the developers or the vendor", 0,
			"this is|message from|note from|notice from|instruction from|instructions from|update from|order from|request from|i am|iam|i'm",
			`\bthis is\s+(?:the\s+|your\s+)?(?:system|developer|developers|admin|administrator|openai|anthropic|sysadmin)\s*(?:speaking|team|here|talking|[.:!,]|$)`,
			`\b(?:message|note|notice|instructions?|update|order)\s+from\s+(?:the\s+|your\s+)?(?:system|developers?|admin|administrator|openai|anthropic|creators?|operators?)\s*[:!-]`,
			`\bi\s*(?:am|'m)\s+(?:your|the\s+ai's|the\s+assistant's)\s+(?:developer|creator|administrator|admin|owner|operator|programmer|master|maker)\b`,
			`\b(?:message|note|instructions?|request)\s+from\s+`+span+`*?\bto\s+you,?\s+(?:the\s+)?(?:ai|llm|assistant|model|agent)\b`,
			`\bi\s*(?:am|'m)\s+(?:an?\s+)?(?:openai|anthropic|google deepmind)\s+(?:employee|engineer|developer|researcher|staff)`),
		mk("reveal-prompt", KindInjection, "asks the model to reveal its prompt or secrets", 0,
			"reveal|leak|disclose|divulge|expose|dump|print|output|show|display|repeat|recite|tell me|give me|write|spell|share|paste|"+
				"translate|copy|verbatim|word for word|what is|what was|what are|what were|password|summar|list|describe|paraphrase|quote|rephrase|rewrite|"+
				"encode|encrypt|convert|compress|first|last|opening",
			`\b(?:first|last|opening)\s+(?:\w+\s+)?(?:words?|lines?|sentences?|characters?|paragraphs?)\s+of\s+your\s+(?:system\s+|initial\s+|original\s+)?(?:prompt|instructions|message|system\s+message)`,
			`\b(?:reveal|leak|disclose|divulge|expose|dump|print|output|show|display|repeat|recite|tell me|give me|write out|spell out|share|paste|translate|summari[sz]e|list|describe|paraphrase|quote|rephrase|rewrite|encode|encrypt|convert|compress)\s+(?:me\s+)?(?:all\s+|back\s+|everything\s+in\s+|the\s+contents?\s+of\s+|what\s+is\s+in\s+)?(?:of\s+)?your\s+(?:(?:entire|full|complete|exact|original|hidden|secret|initial|internal|confidential|system)\s+)*(?:system\s+prompt|system\s+message|prompt|instructions|rules|guidelines|configuration|password|secrets?|api\s+keys?)\b`,
			`\b(?:reveal|leak|disclose|divulge|expose|dump|print|output|show|display|repeat|recite|tell me|give me|write out|spell out|share)\s+(?:me\s+)?(?:the\s+)?(?:(?:full|entire|complete|exact|whole)\s+)?(?:hidden|secret|initial|original|confidential|internal)\s+(?:system\s+)?(?:prompt|instructions|rules|password|message)`,
			`\b(?:repeat|print|output|write|copy|recite)\s+(?:all\s+)?(?:of\s+)?(?:the\s+)?(?:words|text|instructions|everything|content|prompt|messages?)\s+(?:above|before this|preceding|so far)\b`,
			`\b(?:prompt|instructions)\b[^.\n]*?\b(?:verbatim|word for word)\b`,
			`\bwhat\s+(?:is|was|are|were)\s+(?:your\s+(?:system\s+prompt|initial\s+instructions|original\s+instructions|instructions|secret|password|rules)|the\s+(?:hidden|initial|original|secret)\s+(?:prompt|instructions|password))`,
			`\bwhat\s+(?:is|was)\s+the\s+(?:secret\s+)?password\s+you\b|\b(?:tell|give|reveal|spell|print|show|share)\s+(?:me\s+)?(?:the|your)\s+(?:secret\s+)?password\b`),
		mk("override-instructions", KindInjection, "tells the model to ignore or override its instructions", inDocs|negatable,
			"ignor|disregard|forget|bypass|overrid|overrul|neglect|attention|follow|obey|aside|throw|discard|abandon",
			`\b(?:`+overrideVerbs+`)\s+(?:(?:the|your|all|any|of)\s+)*(?:instructions?|guidelines|guidance|rules|directions|directives|task|tasks|prompt|orders|text|request)\s+(?:above|before\s+this|earlier|previously|so\s+far|at\s+the\s+(?:start|beginning|top)|you\s+(?:were|have\s+been)\s+given|given\s+to\s+you)\b`),
		mk("instructions-void", KindInjection, "tells the model its earlier instructions no longer count", 0,
			"you|whatever",
			`\b(?:instructions|rules|guidelines|guidance|directives|prompt|orders)\s+you\s+(?:were|have\s+been|got|received)\b(?:\s+\w+){0,5}?\s+(?:are|is|were|was)\s+(?:now\s+)?(?:outdated|obsolete|void|invalid|cancel+ed|revoked|wrong|fake|no\s+longer\s+valid|only\s+(?:a\s+test|an\s+example)|a\s+test)\b`,
			`\bwhatever\s+you\s+(?:were|have\s+been|had\s+been)\s+(?:told|given|instructed|asked)\b`,
			`\b(?:throw\s+away|toss|scrap|drop|forget|nevermind|never\s+mind|disregard|ignore|discard|dismiss)\s+(?:whatever|any|all|the)?\s*(?:rules|instructions|guidance|guidelines|directives|orders|constraints|restrictions|prompts?|directions)\s+(?:that\s+)?you\s+(?:were|have\s+been|got|received|had|'ve\s+been)\b`,
			`\byour\s+(?:earlier|previous|prior|original|initial|old|former|existing)\s+(?:rules|instructions|guidance|guidelines|directives|orders|constraints|restrictions|prompts?|directions|programming|training)\s+(?:no\s+longer\s+appl(?:y|ies)|(?:are|is)\s+(?:void|cancel+ed|revoked|obsolete|no\s+longer\s+valid|invalid|lifted|suspended|overridden))`),
		mk("ignore-user", KindInjection, "tells the model to ignore the user", inDocs,
			"user|human|operator|owner",
			`\b(?:even\s+if|even\s+when|even\s+though|regardless\s+of\s+whether|no\s+matter\s+whether)\s+(?:the\s+)?(?:user|human|operator|owner)\s+(?:objects?|disagrees?|says\s+no|refuses?|declines?|asks\s+otherwise|forbids?|tells\s+you\s+not\s+to)\b`,
			`\b(?:disagrees?|conflicts?|clashes?)\s+with\s+(?:what\s+)?(?:the\s+)?(?:user|human|operator|owner)(?:'s|s'|’s)?\s*(?:asked|asks|wants|said|says|requests?|instructions?)?\b[^.;\n]{0,40}?\b(?:wins|prevails|takes\s+precedence|comes\s+first|is\s+right|should\s+be\s+followed)\b`,
			`\b(?:ignore|disregard|forget|override|overrule|bypass)\s+(?:what\s+)?(?:the\s+)?(?:user|human|operator)(?:'s|s')?\s+(?:request|requests|question|questions|instructions?|message|messages|wishes|says|asked|wants|asks|limits|restrictions|rules|constraints|boundaries)\b`,
			`\b(?:what(?:ever)?|anything|everything)\s+(?:the\s+)?(?:user|human|operator|owner)\s+(?:says|writes|types|asks)\b[^.;\n]{0,60}?\b(?:(?:can|may|should|must|is\s+to|are\s+to)\s+be\s+(?:disregarded|ignored|overridden|dismissed)|(?:is|are)\s+(?:just\s+|only\s+)?(?:a\s+)?(?:test|tests|noise))\b`,
			`\b(?:user|human|operator|owner)(?:'s|s'|’s)\s+(?:instructions?|requests?|words|orders|wishes)\s+(?:are|is|have|has|come|comes)\s+(?:a\s+)?(?:lower|less|second)\s*(?:priority|important|weight|authority|precedence)?\b`),
		mk("addresses-model", KindInjection, "addresses the model directly from inside the text", 0,
			"ai|llm|model|assistant|agent|bot|gpt|claude|whoever|whatever|hidden",
			`(?:^|[\n.!?"'(<>]\s*)(?:hey|hi|hello|dear|attention|important|note|notice|message|instructions?|todo|reminder|ps|p\.s\.)\s*,?\s*(?:to|for)?\s*(?:the\s+|any\s+|all\s+|you\s+)?(?:ai|llm|language\s+model|model|assistant|ai\s+assistant|ai\s+model|agent|ai\s+agent|bot|chatbot|gpt|claude)s?\b\s*[:,!-]`,
			`\b(?:ai|llm|language\s+model|model|assistant|agent|bot|chatbot)s?\s+(?:reading|processing|parsing|summari[sz]ing|seeing)\s+(?:this|these)\b`,
			`(?:^|[\n.!?"'(<>]\s*)(?:assistant|ai|llm|chatbot)\s*,\s*(?:this|you|please|ignore|from|before|the\s+user)\b`,
			`\[\s*(?:assistant|ai|model|llm|agent|bot)[-\s]?(?:only|note|instructions?|eyes\s+only)\s*\]|\bhidden\s+(?:note|instructions?|message|directive|task)\s*:`,
			`\bif\s+(?:an?\s+|the\s+|any\s+)?(?:ai|assistant|model|llm|agent|bot|chatbot)\s+(?:is\s+)?(?:reading|summari[sz]ing|processing|parsing|sees|reads|summari[sz]es|processes)\s+(?:this|these)\b`,
			`\b(?:note|message|instructions?|todo|task)\s+for\s+(?:whoever|whatever|anyone|any\s+(?:ai|model|agent|system))\s+(?:reads|processes|parses|summari[sz]es|is\s+reading|is\s+processing)\b`),
		mk("fetch-and-obey", KindInjection, "tells the model to fetch instructions and follow them", 0,
			"obey|follow|execute|run|do what|doing what|begin by|start by|start with|begin with",
			`\b(?:fetch|fetching|download|downloading|load|loading|read|reading|visit|visiting|open|opening|get|getting|curl)\s+`+span+`*?(?:https?://\S+|\burl\b)`+span+`*?\band\s+(?:then\s+)?(?:obey|obeying|follow|following|execute|executing|run|running|do\s+what|doing\s+what)\s+(?:it|them|what\s+it\s+says|its\s+instructions|the\s+instructions|whatever)`,
			`\b(?:begin|start)\s+(?:each|every|any)\s+(?:session|conversation|reply|answer|response|task|turn)\s+(?:by|with)\s+(?:fetching|running|executing|visiting|downloading|calling|loading|opening|curling|sending)\b`),
		mk("secret-encoded", KindInjection, "tries to get a secret out in another form", 0,
			"secret|password|passphrase|passcode|pin",
			`\b(?:secret|password|passphrase|passcode)\b`+span+`*?\bfirst\s+letters?\b`,
			`\bfirst\s+letters?\b`+span+`*?\b(?:secret|password|passphrase|passcode)\b`,
			`\b(?:secret\s+word|secret|password|passphrase|passcode|pin\s+code)\b`+span+`*?\b(?:backwards|reversed|in\s+reverse|letter\s+by\s+letter|one\s+(?:letter|character)\s+(?:per|at\s+a)\s+(?:line|time)|spelled\s+out|in\s+base64|base64[- ]encoded|as\s+an\s+acrostic|as\s+a\s+riddle|in\s+pig\s+latin|with\s+spaces\s+between)`),
		mk("secret-to-public", KindInjection, "tells the model to put a secret variable where others read it", 0,
			"key|token|secret|password|passwd|credential|.ssh|.aws|.netrc|.npmrc|.pypirc|id_rsa|id_ed25519",
			`\b(?:copy|paste|put|post|push|write|include|add|append|insert|attach|upload|commit|publish)\b[^.;\n]{0,40}?`+keptSecrets+`\b[^.;\n]{0,60}?\b`+publicPlaces,
			keptSecrets+`\b[^.;\n]{0,30}?\b(?:include|paste|put|post|attach|add|append|upload|push|commit|copy)\s+(?:it|them|its\s+contents?|their\s+contents?)\s+`+publicPlaces,
			`\b(?:copy|paste|put|post|write|include|add|append|insert|print|echo)\s+(?:the\s+(?:value\s+of\s+)?)?\$\{?\w*(?:key|token|secret|password|passwd)\w*\}?\s+(?:into|in|to|on|inside)\s+(?:the\s+|an?\s+|every\s+|each\s+|your\s+)?(?:issue|comment|pull\s+request|pr|commit|gist|chat|slack|channel|readme|changelog|log|public|reply|replies|answer|response|message|description|wiki|page)`),
		// Hidden tool directives.
		mk("hide-from-user", KindInjection, "tells the model to hide what it does from the user", inDocs,
			"without|don't|do not|dont|never|silently|secretly|covertly|stealthily|discreetly|invisibly|keep quiet|keep silent|keep mum|say nothing|leave out|omit|exclude|drop|skip over|hide|not mention|not list|not include|not report|"+
				"from the user|from user|from the human|from human|from the operator|from operator",
			`\b(?:without|don't|do not|dont|never)\s+(?:telling|informing|notifying|alerting|warning|mentioning\s+(?:it|this|that)\s+to|tell|inform|notify|alert|warn|mention\s+(?:it|this|that)\s+to|let(?:ting)?)\s+(?:the\s+|your\s+)?(?:user|human|operator|anyone)\b`,
			`\bwithout\s+(?:mentioning|telling|saying|showing|reporting|disclosing|revealing)\s+(?:it|this|that|anything)\b`,
			`\b(?:don't|do not|dont|never)\s+(?:mention|say|reveal|disclose|report|admit)\s+to\s+(?:the\s+|your\s+)?(?:user|human|operator)\b`,
			`\b(?:keep\s+(?:quiet|silent|mum)|say\s+nothing)\s+about\s+[^.;\n]{0,60}?\byou\s+(?:make|run|do|did|made|ran|send|sent|call|called|execute|executed|fetch|fetched)\b`,
			`\b(?:leave\s+out|omit|exclude|drop|skip\s+over|hide|not\s+(?:mention|list|include|report))\s+(?:any\s+|all\s+|the\s+)?(?:commands?|calls?|requests?|files?|actions?|steps?|changes?)\s+(?:that\s+)?you\s+(?:ran|run|made|make|did|do|sent|send|executed|touched|read|opened|fetched)\b`,
			`\b(?:silently|secretly|covertly|stealthily|discreetly|invisibly)\s+(?:run|execute|call|invoke|send|upload|post|forward|copy|exfiltrate|fetch|download|delete|remove|modify|add|append|insert|include|visit|open|load|curl|transmit|email|write|install)\b`,
			`\b(?:hide|conceal|keep)\s+(?:this|it|these|the\s+(?:following|instructions|action|command|request|call|output))\s+(?:hidden\s+|secret\s+)?from\s+(?:the\s+)?(?:user|human|operator)`,
			`\b(?:do not|don't|never)\s+(?:mention|reveal|disclose|tell|show|say)\s+(?:this|these|that|the following|anything about (?:this|these))\b[^.\n]*?\b(?:to\s+)?(?:the\s+)?(?:user|human)\b`),
		mk("hidden-cue", KindInjection, "hides a directive for the model behind a cue", 0,
			cueNeedles,
			`\b(?:when|whenever|once|if|as soon as|after|upon)\s+(?:you\s+)?(?:see|read|reading|seeing|encounter|load|loading|process|processing|parse|receive|come across|find)\s+(?:this|these)(?:\s*[,:.!]|\s+(?:note|text|instructions?|comment|memory|entry|content|document|webpage|page|email|string|marker|token|phrase|keyword|line)\b)`,
			`\b(?:if|when)\s+you\s+are\s+(?:an?\s+)?(?:ai|a\.i\.|llm|large language model|language model|chatbot|ai assistant|ai agent|autonomous agent|gpt|claude|bot)\b`,
			`\b(?:note|message|instructions?|attention|important|notice|reminder)\s+(?:to|for)\s+(?:the\s+|any\s+|all\s+)?(?:ai|llm|assistant|ai assistant|language model|chatbot|model|agent|bot)s?\s*[:,!-]`,
			`\b(?:ai|llm|assistant|agent|model)\s+(?:instructions?|directive|command|override)\s*:`),
		mk("run-every-reply", KindInjection, "tells the model to run something on every reply", 0,
			"before|prior to|instead of",
			`\b(?:run|execute|call|invoke|fetch|visit|open|load|send|post|curl|wget|download|upload|ping)\b`+span+`*?\b(?:before|prior to|instead of)\s+(?:(?:you\s+)?(?:answering|responding|replying|answer|respond|reply)|(?:every|each|any|your)\s+(?:answer|response|reply|message|turn)s?)\b`,
			`\b(?:before|prior to)\s+(?:answering|responding|replying|(?:every|each|any)\s+(?:answer|response|reply))\b`+span+`*?\b(?:run|execute|call|invoke|fetch|visit|send|curl|wget|post|upload|download|open)\b`),
		mk("link-in-replies", KindInjection, "tells the model to put a link or image in its replies", 0,
			"http",
			`\b(?:every|each|all|any)\s+(?:of\s+)?(?:your\s+)?(?:responses?|replies|reply|answers?|messages?|outputs?)\b[^\n]*?https?://`,
			`https?://[^\n]*?\b(?:in|to|at the end of|at the start of)\s+(?:every|each|all|any)\s+(?:of\s+)?(?:your\s+)?(?:responses?|replies|reply|answers?|messages?|outputs?)\b`),
		mk("tool-call-order", KindInjection, "orders a tool call from inside the text", 0,
			"tool|following command|following script|following code|following shell|this command|this script|this code|this shell",
			`\b(?:call|invoke|trigger)\s+(?:the\s+)?(?:[\w.-]+\s+)?tool\s+(?:with|using|to|and\s+(?:pass|send|run))\b`,
			`\b(?:use|run)\s+the\s+(?:bash|shell|terminal|exec|web_fetch|fetch|http|browser)\s+tool\s+to\s+(?:send|post|upload|fetch|download|curl|wget|visit|open|exfiltrate|delete|remove|rm)\b`,
			`\b(?:execute|run)\s+(?:the\s+following|this)\s+(?:command|script|code|shell command)\s*(?::\s*)?(?:immediately|now|right away|at once|silently|without\b|automatically|every time|whenever)`),

		// Chinese.
		mk("override-instructions-zh", KindInjection, "tells the model to ignore or override its instructions (Chinese)", inDocs|negatable,
			"忽略|无视|忘记|忘掉|忘了|理会|抛弃|丢弃|放弃|绕过|跳过|推翻|遵守|别管",
			`(?:忽略|无视|忘记|忘掉|忘了|不要理会|别理会|不用理会|抛弃|丢弃|放弃|绕过|跳过|推翻|不要遵守|不再遵守|别管|停止遵守|不必遵守|无需遵守|不用遵守)[^。\n]{0,6}(?:之前|以前|先前|此前|上面|上述|前面|以上|原来|原有|原先|原始|初始|所有|全部|一切|任何|系统|开发者|你的|你收到的|你被给予的|给你的)[^。\n]{0,8}(?:指令|指示|提示词|提示|规则|设定|命令|要求|限制|约束|说明|规定|准则|安全策略|内容政策|道德|伦理)`),
		mk("forget-told-zh", KindInjection, "tells the model to forget what it was told (Chinese)", inDocs|negatable,
			"忽略|忘记|忘掉|无视",
			`(?:忽略|无视|忘记|忘掉)[^。\n]{0,4}(?:之前|以前|上面|前面|先前|此前)[^。\n]{0,4}(?:一切|所有|全部|内容|东西|话|对话)`),
		mk("instructions-void-zh", KindInjection, "tells the model its earlier instructions no longer count (Chinese)", 0,
			"之前|前面|上面|刚才|以前|先前|遵守|遵循|服从",
			`(?:之前|前面|上面|刚才|以前|先前)(?:说的|的话|的内容|的指令|的设定|的要求|的规则|给你的)[^。\n]{0,6}(?:都)?(?:不算数|不算|作废|无效|不用管|不再有效|取消了?|失效)`,
			`(?:之前|前面|上面|以前|先前|原来)(?:收到|得到|接收|被给予|给你|设定)的[^。\n]{0,6}(?:规则|指令|设定|要求|限制|提示)[^。\n]{0,6}(?:失效|作废|无效|不算数|不再有效|取消)`,
			`你(?:不用|不必|无需|不需要|不再需要|可以不)再?(?:遵守|遵循|理会|服从|受)(?:任何)?[^。\n]{0,6}(?:规定|规则|限制|指令|约束|要求|准则|政策)`),
		mk("addresses-model-zh", KindInjection, "addresses the model directly from inside the text (Chinese)", 0,
			"的ai|的模型|的助手|的智能体|的大模型|注意|致",
			`(?:读到|看到|处理|收到|阅读)(?:这段|这条|这个|本|此|这些)(?:文字|内容|文档|笔记|信息|消息|文本|页面|文章|帖子|邮件|网页|文)?的(?:ai|模型|助手|智能体|大模型|机器人)`,
			`致[^。\n]{0,10}(?:ai|模型|助手|智能体|大模型)[:：，,]`,
			`(?:ai|模型|助手|智能体|大模型)(?:请注意|注意)[:：]`),
		mk("new-identity-zh", KindInjection, "redefines who the model is (Chinese)", 0,
			"你现在|你将|从现在|从这|从此|不再是|扮演|模式|你是|你没有",
			`你现在(?:是|扮演|的身份是|的新身份|的角色是)|你将扮演|从(?:现在|这一刻|此刻|此时|今天|这时)(?:开始|起)[，,]?\s*你(?:是|就是|将|要扮演|的(?:新)?(?:身份|任务|指令))`,
			`你(?:已经)?不再是(?:一个)?(?:ai|人工智能|助手|语言模型|assistant)`,
			`扮演(?:一个)?(?:系统|管理员|开发者|没有(?:任何)?限制|不受(?:任何)?限制|邪恶|无限制)`,
			`(?:进入|开启|启用|激活|切换到)(?:开发者|上帝|越狱|无限制|dan|管理员|无审查)模式|(?:开发者|越狱|dan)模式(?:已)?(?:开启|启用|激活)`,
			`你(?:是|将是)(?:一个)?(?:没有|不受)(?:任何)?(?:限制|约束|审查|道德)|你没有任何(?:限制|约束|规则|道德)`),
		mk("fake-system-message-zh", KindInjection, "fakes a system or developer message (Chinese)", 0,
			"系统|开发者|管理员",
			`[【\[［]\s*(?:系统|系统消息|系统提示|系统指令|系统通知|开发者|管理员)\s*[】\]］]`,
			`(?:^|\n)\s*(?:系统|开发者|管理员)(?:消息|提示|指令|通知|公告)?\s*[:：]\s*(?:你|忽略|从现在|请忽略|新的|无视)`,
			`(?:来自|这是)(?:系统|开发者|管理员|openai|anthropic)(?:的)?(?:消息|指令|通知)`),
		mk("reveal-prompt-zh", KindInjection, "asks the model to reveal its prompt or secrets (Chinese)", 0,
			"输出|打印|显示|告诉我|重复|泄露|透露|给出|展示|复述|说出|翻译|把你|将你",
			`(?:输出|打印|显示|告诉我|重复|泄露|透露|给出|展示|复述|说出|翻译)[^。\n]{0,6}(?:你的|你收到的|你被设定的|全部|完整的?|原始的?|初始的?|隐藏的?)[^。\n]{0,4}(?:系统提示词?|系统消息|初始指令|原始指令|隐藏指令|系统指令|指令|提示词|设定|密码|秘密)`,
			`(?:把|将)你(?:的|收到的|被设定的)[^。\n]{0,6}(?:系统提示词?|系统消息|初始指令|原始指令|隐藏指令|系统指令|指令|提示词|设定|密码)[^。\n]{0,8}(?:输出|打印|显示|告诉|重复|泄露|透露|发|给|翻译|复述|写)`),
		mk("hidden-cue-zh", KindInjection, "hides a directive for the model behind a cue (Chinese)", 0,
			"当你|如果你是|每次|每一次|所有|告诉|通知|告知|提醒|让用户|悄悄|偷偷|秘密|暗中|默默|的指令|的消息|的提示|的说明|调用",
			`当你(?:看到|读到|读取|加载|处理|收到|遇到)(?:这|此)(?:条|段|个|些|份)?(?:内容|信息|笔记|消息|文字|指令|记忆|文本|提示)?(?:时|后|的时候)?[，,]?\s*(?:请|就|立即|立刻|马上|务必|必须)?(?:执行|运行|调用|发送|访问|上传|请求)`,
			`如果你是(?:一个)?(?:ai|人工智能|大模型|大语言模型|语言模型|助手|智能体|机器人|聊天机器人)`,
			`(?:每次|在每次|每一次|所有)(?:的)?(?:回答|回复|响应)[^。\n]*?https?://`,
			`(?:每次|在每次|每一次)(?:回答|回复|响应)(?:之前|前|之后|后|时)[，,]?\s*(?:都)?(?:先|要|请|必须|务必)?(?:执行|运行|调用|访问|发送|请求|上传|下载|打开)`,
			`(?:不要|别|切勿|不能|禁止)(?:告诉|通知|告知|提醒|让)(?:用户|使用者|任何人)`,
			`(?:悄悄|偷偷|秘密|暗中|默默)(?:地)?(?:执行|运行|发送|上传|调用|删除|访问|下载|修改|转发)`,
			`(?:给|致)(?:ai|人工智能|助手|模型|大模型|智能体)的(?:指令|消息|提示|说明)[:：]`,
			`调用[^。\n]{0,12}工具(?:来|去)?(?:执行|运行|发送|上传|访问|下载)`),
	}, slices.Concat(standingRules(), toolArgRules())...)
})
