// rules.js names the allow rule an "always" answer would keep, following
// permission.Suggest for the common cases: a shell command's first word
// (two for git, go, npm…) with :*, the exact command for dangerous
// programs and wrappers, a file tool's path, a URL's domain, else the
// whole tool. The server decides the rule; this is what the console shows
// before the answer.
const NEVER = new Set(["rm", "rmdir", "su", "dd", "mkfs", "chmod", "chown", "shred", "kill", "killall", "pkill", "reboot", "shutdown",
  "eval", "source", ".", "trap", "curl", "wget", "mv", "truncate", "ssh", "scp", "sudo", "env", "timeout", "nohup", "xargs", "nice", "time"]);
const SUB = new Set(["git", "go", "npm", "pnpm", "yarn", "bun", "cargo", "docker", "podman", "kubectl", "helm", "make", "gh", "pip", "pip3",
  "uv", "poetry", "dotnet", "mvn", "gradle", "terraform", "brew", "apt", "apt-get", "systemctl", "deno", "rustup", "bundle", "rake", "mix", "just"]);
const SHELL = new Set(["bash", "shell", "sh"]);

// suggestRule returns the rule as rein writes it: tool(pattern).
export function suggestRule(tool, input) {
  const inp = input && typeof input === "object" ? input : {};
  if (SHELL.has(tool) && typeof inp.command === "string") {
    const cmds = inp.command.split(/&&|\|\||;|\|/).map((c) => c.trim()).filter(Boolean);
    if (cmds.some((c) => /[$`(]/.test(c))) return tool + " (no rule: the command is built at run time)";
    const pats = [];
    for (const c of cmds) {
      const w = c.split(/\s+/);
      const name = w[0].split("/").pop();
      let p;
      if (NEVER.has(name)) p = c;
      else if (SUB.has(name) && w[1] && !w[1].startsWith("-")) p = name + " " + w[1] + ":*";
      else p = name + ":*";
      if (!pats.includes(p)) pats.push(p);
    }
    return pats.map((p) => tool + "(" + p + ")").join(", ");
  }
  const file = inp.file_path || inp.path;
  if (typeof file === "string" && file) return tool + "(" + file + ")";
  if (typeof inp.url === "string") {
    try { return tool + "(domain:" + new URL(inp.url).hostname.toLowerCase() + ")"; } catch { /* fall through */ }
  }
  return tool;
}
