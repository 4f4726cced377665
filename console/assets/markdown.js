// markdown.js renders a safe subset of Markdown to DOM nodes: headings,
// paragraphs, lists, block quotes, fenced code (with a copy button),
// inline code, bold, italics and links. It never parses HTML: raw HTML in
// the text stays visible text, and links keep only http(s) and mailto
// targets, so streamed model output cannot inject markup (SPEC API-10).
import { h } from "./dom.js";

// render returns a fragment holding text rendered as Markdown.
export function render(text) {
  const frag = document.createDocumentFragment();
  const lines = String(text || "").split("\n");
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    const fence = line.match(/^\s*(```|~~~)\s*([\w+-]*)/);
    if (fence) {
      const body = [];
      i++;
      while (i < lines.length && !lines[i].trim().startsWith(fence[1])) body.push(lines[i++]);
      i++;
      frag.appendChild(codeBlock(body.join("\n"), fence[2]));
      continue;
    }
    const head = line.match(/^(#{1,6})\s+(.*)$/);
    if (head) {
      frag.appendChild(h("h" + Math.min(6, head[1].length + 2), {}, inline(head[2])));
      i++;
      continue;
    }
    if (/^\s*([-*+]|\d+[.)])\s+/.test(line)) {
      const ordered = /^\s*\d/.test(line);
      const list = h(ordered ? "ol" : "ul", {});
      while (i < lines.length && /^\s*([-*+]|\d+[.)])\s+/.test(lines[i])) {
        list.appendChild(h("li", {}, inline(lines[i].replace(/^\s*([-*+]|\d+[.)])\s+/, ""))));
        i++;
      }
      frag.appendChild(list);
      continue;
    }
    if (/^>\s?/.test(line)) {
      const q = [];
      while (i < lines.length && /^>\s?/.test(lines[i])) q.push(lines[i++].replace(/^>\s?/, ""));
      frag.appendChild(h("blockquote", {}, render(q.join("\n"))));
      continue;
    }
    if (line.trim() === "") { i++; continue; }
    const para = [];
    while (i < lines.length && lines[i].trim() !== "" && !/^(#{1,6}\s|```|~~~|>|\s*([-*+]|\d+[.)])\s)/.test(lines[i])) para.push(lines[i++]);
    if (para.length === 0) para.push(lines[i++]);
    frag.appendChild(h("p", {}, inline(para.join("\n"))));
  }
  return frag;
}

// codeBlock is a fenced block with a copy button.
function codeBlock(code, lang) {
  const pre = h("pre", { class: "code", "data-lang": lang || null }, h("code", {}, code));
  const copy = h("button", { class: "copy", type: "button", title: "Copy" }, "copy");
  copy.addEventListener("click", () => navigator.clipboard && navigator.clipboard.writeText(code));
  return h("div", { class: "codewrap" }, copy, pre);
}

// inline renders code spans, links, bold and italics as nodes.
export function inline(text) {
  const out = [];
  const re = /(`+)([\s\S]*?)\1|\[([^\]]+)\]\(([^)\s]+)\)|\*\*([^*]+)\*\*|__([^_]+)__|\*([^*\s][^*]*)\*|_([^_\s][^_]*)_/g;
  let last = 0, m;
  while ((m = re.exec(text)) !== null) {
    if (m.index > last) out.push(text.slice(last, m.index));
    if (m[1]) out.push(h("code", {}, m[2]));
    else if (m[3]) out.push(link(m[3], m[4]));
    else if (m[5] || m[6]) out.push(h("strong", {}, m[5] || m[6]));
    else out.push(h("em", {}, m[7] || m[8]));
    last = re.lastIndex;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

// link is an anchor only for http(s) and mailto targets; anything else
// (javascript:, data:, relative paths into the API) stays text.
function link(label, href) {
  let u;
  try { u = new URL(href); } catch { return label + " (" + href + ")"; }
  if (!["http:", "https:", "mailto:"].includes(u.protocol)) return label + " (" + href + ")";
  return h("a", { href: u.href, rel: "noopener noreferrer nofollow", target: "_blank" }, label);
}
