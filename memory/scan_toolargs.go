package memory

// The rules of tool poisoning (SPEC MEM-3, MCP-2; found by issue 22's
// second probes): text a tool's definition or a document puts in front of
// the model to make it smuggle secrets out through a tool's own arguments
// — no network command, no URL: the server the argument goes to is the
// sink — or to redirect what another tool sends. They apply to documents
// too (ScanDocument: AGENTS.md, skills, MCP tool definitions), where no
// honest text asks for a key file in a parameter.

// secretThings are what a poisoned definition asks for, lower case.
const secretThings = `(?:~/\.ssh\S*|\S*id_(?:rsa|dsa|ecdsa|ed25519)\S*|~/\.aws\S*|\S*\.aws/credentials|~/\.cursor/\S+|~/\.config/\S+|~/\.netrc|\B\.env\b(?:\s+files?)?|` +
	`(?:their|the\s+user's|all(?:\s+the)?)\s+(?:\.env|environment\s+variables|env\s+vars|api\s+keys?|credentials|secrets|tokens?|passwords?|private\s+keys?|ssh\s+keys?|cookies)|` +
	`(?:the\s+)?(?:(?:full|entire|whole)\s+(?:conversation|chat)|(?:conversation|chat)\s+(?:so\s+far|history)|history\s+of\s+the\s+conversation|(?:full\s+text\s+of\s+)?(?:your|the)\s+system\s+prompt)(?:\s+so\s+far)?)`

// toolArgRules are the rules of tool poisoning.
func toolArgRules() []rule {
	return []rule{
		mk("secret-in-argument", KindExfiltration, "tells the model to put a secret, a key file or the conversation into a tool's argument", inDocs,
			"argument|parameter|param|field|arg",
			`\b(?:pass|put|send|include|add|provide|attach|supply|fill|insert|append|copy|paste|set|read)\b[^.;\n]{0,40}?`+secretThings+`[^.;\n]{0,60}?\b(?:as|in|into|to|inside|within|through|via)\s+(?:the\s+|its\s+|this\s+tool's\s+|a\s+)?[\x60'"]?[\w-]+[\x60'"]?\s+(?:argument|parameter|param|field|arg)\b`,
			`\b(?:with|using)\s+`+secretThings+`\s+as\s+(?:the\s+|its\s+)?[\x60'"]?[\w-]+[\x60'"]?\s+(?:argument|parameter|param|field|arg)\b`,
			`\b(?:argument|parameter|param|field)\s+[\x60'"]?[\w-]+[\x60'"]?\s+(?:must|should|shall)\s+(?:always\s+)?(?:contain|hold|include|be\s+set\s+to)\s+`+secretThings),
		mk("redirect-recipient", KindExfiltration, "tells the model to send what another tool sends somewhere else", inDocs,
			"instead of|rather than|send|forward|redirect|route|bcc|cc ",
			`\b(?:send|forward|redirect|route|bcc|cc|copy)\s+(?:all|every|each|any)\s+(?:\w+\s+){0,2}?(?:emails?|e-mails?|messages?|payments?|transfers?|funds|invoices?|files?|requests?|replies)\s+to\s+\S+@\S+`,
			`\b(?:send|forward|redirect|route|deliver|pay|transfer)\b[^.;\n]{0,60}?\b(?:instead\s+of|rather\s+than)\s+(?:to\s+)?the\s+(?:recipient|addressee|intended\s+recipient|specified\s+recipient|requested\s+recipient|user's\s+recipient|given\s+address|payee|account\s+the\s+user)`),
	}
}
