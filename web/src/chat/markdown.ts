// Assistant markdown → sanitised HTML. marked renders, highlight.js colours
// code blocks (core plus a handful of languages, to keep the bundle lean), and
// DOMPurify strips anything active: the model's text is untrusted input.
import DOMPurify from 'dompurify';
import hljs from 'highlight.js/lib/core';
import bash from 'highlight.js/lib/languages/bash';
import diff from 'highlight.js/lib/languages/diff';
import go from 'highlight.js/lib/languages/go';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import python from 'highlight.js/lib/languages/python';
import rust from 'highlight.js/lib/languages/rust';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';
import { Marked, type Tokens } from 'marked';

let registered = false;
/** The languages, registered with the first code block (not while the page starts: it cost the boot ~30 ms). */
function registerLanguages(): void {
  if (registered) return;
  registered = true;
  const languages = { bash, diff, go, javascript, json, python, rust, typescript, xml, yaml };
  for (const [name, lang] of Object.entries(languages)) hljs.registerLanguage(name, lang);
  hljs.registerAliases(['sh', 'shell', 'zsh', 'console'], { languageName: 'bash' });
  hljs.registerAliases(['js', 'jsx', 'mjs'], { languageName: 'javascript' });
  hljs.registerAliases(['ts', 'tsx'], { languageName: 'typescript' });
  hljs.registerAliases(['html', 'svg'], { languageName: 'xml' });
  hljs.registerAliases(['py'], { languageName: 'python' });
  hljs.registerAliases(['rs'], { languageName: 'rust' });
  hljs.registerAliases(['yml'], { languageName: 'yaml' });
}

/** Highlighting costs time; past this a block is shown plain. */
const MAX_HIGHLIGHT = 20_000;

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Highlighted HTML for a code block, or escaped text. */
export function highlight(code: string, lang: string | undefined): string {
  const name = (lang ?? '').trim().split(/\s+/)[0]?.toLowerCase() ?? '';
  if (name !== '') registerLanguages();
  if (code.length <= MAX_HIGHLIGHT && name !== '' && hljs.getLanguage(name)) {
    return hljs.highlight(code, { language: name, ignoreIllegals: true }).value;
  }
  return escapeHtml(code);
}

const marked = new Marked({
  gfm: true,
  breaks: false,
  renderer: {
    // Raw HTML in model output is shown as text: `run <command>` or `Vec<String>`
    // are placeholders and generics, not markup. DOMPurify stays as a second wall.
    html({ text, block }: Tokens.HTML | Tokens.Tag): string {
      return block ? `<p class="raw-html">${escapeHtml(text)}</p>` : escapeHtml(text);
    },
    code({ text, lang }: Tokens.Code): string {
      const name = (lang ?? '').trim().split(/\s+/)[0] ?? '';
      const label = name === '' ? '' : ` data-lang="${escapeHtml(name)}"`;
      return `<pre class="code"${label}><code class="hljs">${highlight(text, name)}</code></pre>\n`;
    },
  },
});

/** What the sanitiser lets through: no forms, no styles, no media that loads from elsewhere. */
const PURIFY_CONFIG = {
  USE_PROFILES: { html: true },
  FORBID_TAGS: ['style', 'form', 'input', 'button', 'textarea', 'select', 'iframe', 'img', 'video', 'audio'],
  FORBID_ATTR: ['style'],
};

let purify: typeof DOMPurify | undefined;
/**
 * The chat's own sanitiser, configured once (a config passed to every
 * `sanitize` is parsed again each time: its allow-lists were most of what
 * a long stream of messages allocated).
 */
function purifier(): typeof DOMPurify {
  if (!purify) {
    purify = DOMPurify(window);
    purify.setConfig(PURIFY_CONFIG);
    // Links open in a new tab and cannot reach back into this one.
    purify.addHook('afterSanitizeAttributes', (node) => {
      if (node.tagName === 'A') {
        node.setAttribute('target', '_blank');
        node.setAttribute('rel', 'noopener noreferrer');
      }
    });
  }
  return purify;
}

/** Markdown → safe HTML. */
export function renderMarkdown(src: string): string {
  // Fail closed: where DOMPurify cannot work, show the text, never raw HTML.
  if (!DOMPurify.isSupported) return `<p>${escapeHtml(src)}</p>`;
  const html = marked.parse(src, { async: false });
  return purifier().sanitize(html);
}

/**
 * Renders a small sample, so that the first entries drawn do not pay for
 * the sanitiser's setup and the renderer's first run (called while a long
 * history is still arriving, when the page waits on the network).
 */
export function prepareMarkdown(): void {
  renderMarkdown('A *short* [sample](https://example.invalid) with `code`:\n\n- one\n- two\n\n```sh\necho ready\n```');
}
