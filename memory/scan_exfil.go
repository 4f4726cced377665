package memory

import (
	"net"
	"net/url"
	"strings"
)

// The parts of an exfiltration: a way out (a network command, a remote
// URL) and something secret (a key variable, a key file, the whole
// environment) on the same line.
var (
	// netCommand matches network tools and calls, lower case.
	netCommand = lazyRE("(?:^|[\\s|;&(`$\"'])(?:curl|wget|nc|ncat|netcat|socat|telnet|ftp|tftp|sftp|scp|rsync|" +
		"invoke-webrequest|invoke-restmethod|iwr|irm|httpie|xh|aria2c|dig|nslookup|sendmail|mutt)(?:\\s|$)" +
		// ssh as a command (ssh host, ssh -p 22 user@host), not the word
		// ("SSH access uses the key in ~/.ssh/x").
		"|(?:^|[\\s|;&(`$\"'])ssh\\s+(?:-\\S+\\s+(?:[\\w./~-]+\\s+)?)*[\\w.-]*[@.:]" +
		`|\bfetch\s*\(|\baxios\.(?:get|post|put|request)\b|\brequests\.(?:get|post|put|request)\b|\burllib\.request\b|\burlopen\s*\(` +
		`|\bhttp\.(?:get|post|newrequest)\b|\bxmlhttprequest\b|\bsendbeacon\b|\bnew\s+websocket\b|/dev/(?:tcp|udp)/`)
	// urlPattern finds URLs, lower case.
	urlPattern = lazyRE("\\b(?:https?|wss?|ftp)://[^\\s\"'<>()`\\\\]+")
	// secretVar matches references to secret variables, as written.
	secretVar = lazyRE(`\$\{?(?:[A-Z0-9_]*_)?(?:API_?KEY|APIKEY|KEYS?|TOKEN|SECRET|SECRETS|PASSWORD|PASSWD|PASS|CREDENTIALS?|CREDS|AUTH|COOKIE|SESSION|PRIVATE_KEY|ACCESS_KEY)(?:_[A-Z0-9_]*)?(?:\}|\b)` +
		`|(?i:\$env:[a-z0-9_]*(?:key|token|secret|password))` +
		`|%[A-Z0-9_]*(?:KEY|TOKEN|SECRET|PASSWORD)[A-Z0-9_]*%` +
		`|process\.env\.[A-Z0-9_]*(?:KEY|TOKEN|SECRET|PASSWORD)` +
		`|(?:os\.environ(?:\.get)?\s*[\[(]|getenv\s*\(|ENV\[|env::var\s*\()\s*["'][A-Z0-9_]*(?:KEY|TOKEN|SECRET|PASSWORD)`)
	// sensitivePath matches files that hold keys and credentials, lower
	// case.
	sensitivePath = lazyRE(`~/\.ssh\b|\.ssh/|~/\.aws\b|/\.aws/|~/\.kube\b|~/\.docker\b|~/\.config/gh\b|~/\.gnupg\b|\bid_(?:rsa|dsa|ecdsa|ed25519)\b|\.aws/credentials|\.aws/config\b|\.netrc\b|\.npmrc\b|\.pypirc\b` +
		`|\.git-credentials\b|\.docker/config\.json|\.kube/config\b|/etc/shadow\b|/etc/passwd\b|\.gnupg\b|(?:^|[\s/"'=<(:])\.env\b` +
		`|/proc/(?:self|\d+)/environ|\.config/gcloud|application_default_credentials|\.bash_history|\.zsh_history|\.config/rein\b` +
		`|\bcredentials\.json\b|\bwallet\.dat\b`)
	// keyUse ends the text before a key file that is used, not read: ssh
	// -i, IdentityFile, ssh-add, chmod.
	keyUse = lazyRE(`(?:-i\s*=?\s*|identityfile\s*=?\s*|ssh-add\s+(?:-\S+\s+)*|--key(?:-file)?[=\s]+|keyfile\s*[=:]\s*|chmod\s+\S+\s+|key_path\s*[=:]\s*["']?|ls\s+(?:-\S+\s+)*)$`)
	// envDump matches the whole environment being read, lower case.
	envDump = lazyRE("(?:^|[\\s|;&(`$])(?:env|printenv|export\\s+-p|declare\\s+-x|compgen\\s+-v)\\s*(?:$|[|>)`;&])|\\bset\\s*\\|" +
		`|--export-secret|find-(?:generic|internet)-password|\baws\s+configure\s+(?:get|export-credentials)|\bop\s+(?:read|item\s+get)|\bvault\s+(?:kv\s+)?(?:get|read)` +
		`|\bkubectl\s+get\s+secrets?|\bkubectl\s+config\s+view\s+[^\n|]*--raw|\bgh\s+auth\s+token|\bgit\s+credential\s+fill|\bsecurity\s+dump-keychain` +
		`|get-childitem\s+env:|\bgci\s+env:|\bdir\s+env:|\bls\s+env:|getenvironmentvariables|os\.environ\s*(?:$|[)\]},;]|\.items|\.copy)` +
		`|json\.dumps\(\s*(?:dict\()?os\.environ|process\.env\s*(?:$|[)\]},;])|json\.stringify\(\s*process\.env`)
	// secretRead matches a key file or the environment read into a
	// variable, lower case: the way out may be on a later line.
	secretRead = lazyRE("(?:=|\\$\\(|`)\\s*(?:cat|base64|type|get-content|gc|head|tail|xxd|od|gpg|tar|printenv|env)\\b[^\\n]*")
	// secretParams are query parameters that carry keys.
	secretParams = map[string]bool{"key": true, "api_key": true, "apikey": true, "api-key": true, "token": true,
		"access_token": true, "auth": true, "auth_token": true, "secret": true, "client_secret": true, "password": true,
		"pass": true, "pwd": true, "passwd": true, "session": true, "sid": true, "cookie": true, "creds": true, "credentials": true}
	// literalSecret matches keys and tokens of well-known formats, as
	// written.
	literalSecret = lazyRE(`\bsk-(?:ant-|proj-|live-)?[A-Za-z0-9_-]{20,}|\bgh[pousr]_[A-Za-z0-9]{30,}|\bgithub_pat_[A-Za-z0-9_]{30,}` +
		`|\bAKIA[0-9A-Z]{16}\b|\bxox[abposr]-[A-Za-z0-9-]{10,}|\bAIza[0-9A-Za-z_-]{35}|-----BEGIN (?:[A-Z]+ )*PRIVATE KEY-----` +
		`|\bglpat-[A-Za-z0-9_-]{20,}|\bnpm_[A-Za-z0-9]{36}\b|\bhf_[A-Za-z0-9]{30,}`)
	// imageBeacon matches a Markdown image whose URL carries a template
	// to fill with data, lower case.
	imageBeacon = lazyRE(`!\[[^\]\n]*\]\(\s*https?://[^)\s]*[?&#/][^)\s]*(?:\{|\$|<|%7b|\[)`)
	// proseExfil matches sending secrets somewhere in words, lower case.
	proseExfil = lazyRE(`\b(?:whenever|every\s+time|each\s+time|always)\b` + exfilSpan + `*?\b(?:post|send|upload|forward|copy|mirror|sync)\s+(?:it|them|that|this|the\s+\w+|a\s+copy)\s+(?:\w+\s+)?to\s+https?://` +
		`|\b(?:include|put|show|print|add|append|echo)\s+(?:their|the\s+user's|my|your|all|the)?\s*(?:(?:\w+_)?api\s+keys?|secrets?|passwords?|tokens?|credentials)\s+in\s+(?:every|each|all|your)\s+(?:reply|replies|answer|answers|response|responses|message|messages|output)` +
		`|\b` + exfilVerbs + `\b` + exfilSpan + `*?\b` + exfilNouns + `\b` + exfilSpan + `*?\b` + exfilTarget +
		`|\b` + exfilNouns + `\b` + exfilSpan + `*?\b` + exfilVerbs + `\b` + exfilSpan + `*?\b` + exfilTarget)
	// proseExfilZH is proseExfil in Chinese.
	proseExfilZH = lazyRE(`(?:把|将)[^。\n]*?(?:密钥|api ?key|令牌|token|密码|凭证|凭据|私钥|环境变量|\.env|~/\.ssh|\.aws|credentials|id_rsa|cookie|聊天记录|对话记录|系统提示|邮箱地址|手机号|身份证号?|个人信息|银行卡号?|验证码)[^。\n]*?(?:发送|上传|发到|传到|转发|贴到|post|回传|外发|提交给|发给)` +
		`|(?:发送|上传|发到|传到|转发|回传)[^。\n]{0,10}(?:密钥|令牌|token|密码|凭证|凭据|私钥|环境变量|聊天记录|对话记录)[^。\n]*?(?:到|至|给)[^。\n]*?(?:https?://|服务器|网址|地址|邮箱|@)`)
)

// The parts of proseExfil.
const (
	exfilVerbs = `(?:send|post|upload|transmit|forward|exfiltrate|leak|email|e-mail|mail|submit|copy|paste|share|append|attach|encode|pipe)`
	exfilNouns = `(?:(?:\w+_)?api[ _-]?keys?|secret keys?|secrets|(?:access|auth|api|bearer|github|gh|npm|session|refresh|oauth|the|your|all)[ _-]?tokens?|passwords?|credentials|private keys?|ssh keys?|` +
		`environment variables|env vars|(?:session )?cookies|\.env\b|~/\.ssh|id_rsa|aws credentials|conversation history|chat history|the conversation|system prompt|` +
		`payment methods?|credit cards?(?: numbers?)?|bank (?:details|account)|security codes?|verification codes?|2fa codes?|one-time (?:codes?|passwords?)|otp)`
	exfilSpan   = `(?:[^.\n]|\.\S)`
	exfilTarget = `(?:to|at|into|in|via)\s+(?:https?://|\S+@\S+\.\w+|(?:my|our|this|the following|an? external|the attacker's|a remote|this external)\s+(?:\w+\s+)?(?:server|endpoint|url|webhook|address|email|inbox|domain|site|image url)|[a-z0-9-]+\.(?:com|net|org|io|xyz|ru|cn|top|site|info|dev|app|me|co)\b)`
)

// Cheap filters before proseExfil and proseExfilZH: one word of each
// list must occur.
var (
	exfilNeedles = []string{"key", "secret", "token", "password", "credential", "ssh", "env", "cookie", "conversation",
		"chat history", "system prompt", "payment", "credit card", "bank", "code", "otp", "whenever", "every time",
		"each time", "always"}
	exfilVerbNeedles = []string{"send", "post", "upload", "transmit", "forward", "exfiltrate", "leak", "mail", "submit",
		"copy", "paste", "share", "append", "attach", "encode", "pipe", "include", "put", "show", "print", "add", "echo",
		"mirror", "sync"}
	exfilNeedlesZH = []string{"把", "将", "发送", "上传", "发到", "传到", "转发", "回传"}
	// sensitiveNeedles are words one of which every match of
	// sensitivePath holds.
	sensitiveNeedles = []string{".ssh", "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", ".aws", ".netrc", ".npmrc", ".pypirc",
		".git-credentials", ".docker", ".kube", "/etc/shadow", "/etc/passwd", ".gnupg", ".env", "environ", ".config/gcloud", ".config/gh",
		"application_default_credentials", "_history", ".config/rein", "credentials.json", "wallet.dat"}
)

// Cheap filters before the expressions of scanExfil, lower case: the
// expression cannot match without one of the words.
var (
	literalNeedles = []string{"sk-", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "akia", "xox", "aiza",
		"private key", "glpat-", "npm_", "hf_"}
	netNeedles = []string{"curl", "wget", "nc ", "ncat", "netcat", "socat", "telnet", "ftp", "scp", "rsync", "invoke-",
		"iwr ", "irm ", "httpie", "xh ", "aria2c", "dig ", "nslookup", "sendmail", "mutt", "ssh ", "fetch", "axios",
		"requests.", "urllib", "urlopen", "http.", "xmlhttprequest", "sendbeacon", "websocket", "/dev/tcp", "/dev/udp"}
	readNeedles = []string{"=", "$(", "`"}
	envNeedles  = []string{"env", "set", "export", "declare", "compgen", "environ", "getenvironment", "password", "aws ", "op ",
		"vault ", "secret", "gh auth", "credential", "keychain", "kubectl"}
)

// containsAny reports whether s contains one of subs.
func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// reverseShell matches commands that hand a shell to a remote host,
// lower case.
var reverseShell = lazyRE(`\b(?:nc|ncat|netcat)\s+(?:-\S+\s+)*-[a-z]*[ec]\s*/bin/(?:ba|z|da)?sh\b|/dev/(?:tcp|udp)/\S+\s*0?[<>]&\s*[12]` +
	`|\bbash\s+-i\s*[>&]+\s*/dev/(?:tcp|udp)/|\bmkfifo\b[^\n]*\b(?:nc|ncat|netcat)\b|\bsocat\b[^\n]*\bexec:|\bsocket\b[^\n]*\bsubprocess\b[^\n]*\bsh\b`)

// routeLinks matches sending every link or request through a host, lower
// case.
var routeLinks = lazyRE(`\b(?:all|every|each|any)\s+(?:\w+\s+)?(?:links?|urls?|requests?|traffic|clicks?)\b[^\n]*?\b(?:routed|sent|go(?:es)?|redirected|proxied|passed|rewritten)\s+(?:through|via|to)\s+https?://` +
	`|\b(?:route|send|redirect|proxy|rewrite|pass)\s+(?:all|every|each|any)\s+(?:\w+\s+)?(?:links?|urls?|requests?|traffic|clicks?)\b[^\n]*?\b(?:through|via|to)\s+https?://`)

// templateWords in a URL's query mean it is a template to fill with the
// conversation or secrets.
var templateWords = lazyRE(`conversation|chat|history|summary|message|secret|password|passwd|token|apikey|api_key|对话|聊天|密钥|密码|记录`)

// The reasons of the exfiltration findings.
const (
	reasonSends     = "sends a secret over the network: a network command or URL together with a key variable, a key file or the environment"
	reasonURLKey    = "puts a key or token in the query of a URL to an outside host"
	reasonLiteral   = "holds what looks like a real key or token; memory and instructions go to the model provider with every request — keep secrets in a secret manager and write down only where they live"
	reasonBeacon    = "has an image link whose URL is a template to fill with data: showing it would send that data to the host"
	reasonProse     = "tells the model to send secrets or the conversation somewhere"
	reasonProseZH   = "tells the model to send secrets or the conversation somewhere (Chinese)"
	reasonReadLater = "reads a key file or the environment and sends it over the network a few lines later"
	reasonShell     = "hands a shell to a remote host (a reverse shell)"
	reasonRoute     = "sends every link or request through an outside host"
	reasonTemplate  = "has a URL whose query is a template for the conversation or secrets: filling it in would send them to the host"
)

// scanExfil finds exfiltration in text (raw) and its lower-case form;
// found are the words of index that occur in it.
func scanExfil(raw, lower string, doc bool, found []bool) []Finding {
	index := index()
	var out exfilFindings
	add := out.add
	if index.any(found, index.literal) {
		if m := literalSecret.FindString(raw); m != "" {
			add(reasonLiteral, m[:min(len(m), 12)]+"…")
		}
	}
	if strings.Contains(lower, "![") {
		if m := imageBeacon.FindString(lower); m != "" {
			add(reasonBeacon, m)
		}
	}
	if index.any(found, index.exfil) && index.any(found, index.exfilVerb) {
		if loc := findUnnegated(proseExfil, lower); loc != nil {
			add(reasonProse, lower[loc[0]:loc[1]])
		}
	}
	if index.any(found, index.exfilZH) {
		if loc := findUnnegated(proseExfilZH, lower); loc != nil {
			add(reasonProseZH, lower[loc[0]:loc[1]])
		}
	}
	if index.any(found, index.net) || strings.Contains(lower, "/dev/") {
		if m := reverseShell.FindString(lower); m != "" {
			add(reasonShell, m)
		}
	}
	if strings.Contains(lower, "://") {
		if m := routeLinks.FindString(lower); m != "" {
			add(reasonRoute, m)
		}
	}
	if strings.Contains(lower, "://") || (index.any(found, index.net) && netCommand.MatchString(lower)) {
		scanLines(raw, lower, doc, &out)
	}
	return out.list
}

// exfilFindings collects exfiltration findings, one per reason.
type exfilFindings struct{ list []Finding }

func (fs *exfilFindings) add(reason, ex string) {
	for _, f := range fs.list {
		if f.Reason == reason {
			return
		}
	}
	fs.list = append(fs.list, Finding{Kind: KindExfiltration, Rule: "exfiltration", Reason: reason, Excerpt: clip(strings.Join(strings.Fields(ex), " "), excerptRunes)})
}

// scanLines looks, line by line, for a way out (a network command, a URL
// to another host) next to something secret, or a few lines after a key
// file or the environment was read; and for URLs that carry keys or are
// templates for the conversation.
func scanLines(raw, lower string, doc bool, out *exfilFindings) {
	add := out.add
	rawLines, lowerLines := strings.Split(raw, "\n"), strings.Split(lower, "\n")
	if len(rawLines) != len(lowerLines) {
		rawLines = lowerLines
	}
	readAt := -10
	for i, l := range lowerLines {
		if containsAny(l, readNeedles) && secretRead.MatchString(l) && (hasSensitivePath(l) || envDump.MatchString(l)) {
			readAt = i
		}
		hosts, local := remoteURLs(l)
		if len(hosts) == 0 && (local || !containsAny(l, netNeedles) || !netCommand.MatchString(l)) {
			continue // no way out, or only to this machine
		}
		switch {
		case hasSensitivePath(l) || (containsAny(l, envNeedles) && envDump.MatchString(l)) || sendsSecretVar(rawLines[i], hosts):
			add(reasonSends, rawLines[i])
		case i-readAt <= 3 && i != readAt:
			add(reasonReadLater, rawLines[i])
		}
		for _, u := range hosts {
			if keyInQuery(u, doc) {
				add(reasonURLKey, u.String())
			}
			if queryTemplate(u, doc) {
				add(reasonTemplate, u.String())
			}
		}
	}
}

// vendorHosts are the hosts a vendor's key may go to: sending
// $OPENAI_API_KEY to api.openai.com is how the key is used.
var vendorHosts = map[string][]string{
	"OPENAI": {"openai.com"}, "ANTHROPIC": {"anthropic.com"}, "GEMINI": {"googleapis.com"}, "GOOGLE": {"googleapis.com"},
	"GITHUB": {"github.com", "githubusercontent.com"}, "GH": {"github.com"}, "GITLAB": {"gitlab.com"},
	"HF": {"huggingface.co"}, "HUGGINGFACE": {"huggingface.co"}, "STRIPE": {"stripe.com"}, "SLACK": {"slack.com"},
	"NPM": {"npmjs.org", "npmjs.com"}, "MISTRAL": {"mistral.ai"}, "DEEPSEEK": {"deepseek.com"}, "OPENROUTER": {"openrouter.ai"},
}

// sendsSecretVar reports a line (as written) naming a secret variable
// next to a way out, unless every such variable is a vendor's key and
// every host the line names is that vendor's.
func sendsSecretVar(line string, hosts []*url.URL) bool {
	vars := secretVar.FindAllString(line, -1)
	if len(vars) == 0 {
		return false
	}
	if len(hosts) == 0 {
		return true
	}
	for _, v := range vars {
		name := strings.TrimLeft(v, "${")
		vendor, _, _ := strings.Cut(name, "_")
		allowed := vendorHosts[vendor]
		if allowed == nil {
			return true
		}
		for _, u := range hosts {
			if !hostIn(u.Hostname(), allowed) {
				return true
			}
		}
	}
	return false
}

// hostIn reports whether host is one of domains or under one.
func hostIn(host string, domains []string) bool {
	for _, d := range domains {
		if host == d || strings.HasSuffix(host, "."+d) {
			return true
		}
	}
	return false
}

// queryTemplate reports a URL whose query names the conversation or
// secrets as a value to fill in: in braces or brackets, after a $, or (in
// memory) in Chinese words.
func queryTemplate(u *url.URL, doc bool) bool {
	q, err := url.QueryUnescape(u.RawQuery)
	if err != nil || q == "" || !templateWords.MatchString(q) {
		return false
	}
	return strings.ContainsAny(q, "{}<>[]$") || (!doc && hasHan(q))
}

// hasHan reports text holding Chinese characters.
func hasHan(s string) bool {
	for _, r := range s {
		if r >= 0x4E00 && r <= 0x9FFF {
			return true
		}
	}
	return false
}

// findUnnegated returns the first match of re in s that no negation
// precedes.
func findUnnegated(re *lazyRegexp, s string) []int {
	for _, loc := range re.FindAllStringIndex(s, 8) {
		if !negated(s, loc[0]) {
			return loc
		}
	}
	return nil
}

// hasSensitivePath reports a key file named in line (lower case) other
// than one used as a key (ssh -i) or a template (.env.example).
func hasSensitivePath(line string) bool {
	if !containsAny(line, sensitiveNeedles) {
		return false
	}
	for _, loc := range sensitivePath.FindAllStringIndex(line, -1) {
		rest := line[loc[1]:]
		if strings.HasSuffix(line[loc[0]:loc[1]], ".env") && (strings.HasPrefix(rest, ".example") ||
			strings.HasPrefix(rest, ".sample") || strings.HasPrefix(rest, ".template") || strings.HasPrefix(rest, ".dist")) {
			continue
		}
		start := loc[0]
		for start > 0 && line[start-1] != ' ' && line[start-1] != '\t' && line[start-1] != '=' && line[start-1] != '"' && line[start-1] != '\'' {
			start--
		}
		if keyUse.MatchString(line[max(0, start-40):start]) {
			continue
		}
		return true
	}
	return false
}

// remoteURLs returns the URLs of line that lead to another host; local
// reports URLs that all stay on this machine or network.
func remoteURLs(line string) (remote []*url.URL, local bool) {
	if !strings.Contains(line, "://") {
		return nil, false
	}
	for _, s := range urlPattern.FindAllString(line, 16) {
		u, err := url.Parse(strings.TrimRight(s, ".,;:!?*_"))
		if err != nil || u.Host == "" {
			continue
		}
		if localHost(u.Hostname()) {
			local = true
			continue
		}
		remote = append(remote, u)
	}
	return remote, local && len(remote) == 0
}

// localHost reports a host on this machine or a private network: the
// loopback and private addresses, localhost, names without a dot and the
// reserved local domains.
func localHost(h string) bool {
	h = strings.TrimSuffix(strings.ToLower(h), ".")
	if ip := net.ParseIP(h); ip != nil {
		return ip.IsLoopback() || ip.IsPrivate() || ip.IsUnspecified() || ip.IsLinkLocalUnicast()
	}
	if !strings.Contains(h, ".") {
		return true
	}
	for _, s := range []string{".localhost", ".local", ".internal", ".lan", ".home.arpa", ".test", ".invalid"} {
		if strings.HasSuffix(h, s) {
			return true
		}
	}
	return false
}

// keyInQuery reports a URL whose query passes a key. In documents only a
// value filled in from a variable or a template counts: documentation
// shows ?key=YOUR_KEY.
func keyInQuery(u *url.URL, doc bool) bool {
	for k, vs := range u.Query() {
		if !secretParams[strings.ToLower(k)] {
			continue
		}
		for _, v := range vs {
			if v == "" {
				continue
			}
			if !doc || strings.ContainsAny(v, "${<%") {
				return true
			}
		}
	}
	return false
}
