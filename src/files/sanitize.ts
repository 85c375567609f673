import type { Config, DOMPurify } from 'dompurify';
import type { JSDOM } from 'jsdom';
import { whenNeeded } from '../lib/when-needed';

/**
 * Sanitising markup that other people's browsers will render: uploaded SVG
 * images and the HTML of html surfaces. DOMPurify over one jsdom window per
 * kind (hooks are per instance, so the two policies never mix).
 *
 * SVG (served from /api/blobs with a CSP that forbids scripts anyway):
 * no scripts, event handlers, `<foreignObject>` (which would embed HTML) or
 * `<use>`; an `href`/`xlink:href` may only point inside the image (`#id`),
 * at an embedded raster image (`data:image/png|jpeg|gif|webp`) on
 * `<image>`, or, on a link `<a>`, at an http(s) or mailto URL. External
 * resources are dropped: an image that loads a third-party URL is a
 * tracking pixel.
 *
 * HTML (html surfaces): DOMPurify's defaults (no scripts, event handlers,
 * `javascript:` URLs, iframes, objects, embeds) plus no forms or form
 * controls (an html page must not be able to phish for input). Styles stay,
 * both `<style>` elements and `style` attributes: styling is what an html
 * surface is for, and the web app renders it in a sandboxed frame. Inline
 * SVG and MathML stay. The result is a body fragment: a full document's
 * `<head>` is dropped (put `<style>` in the body).
 */

const SVG_NS = 'http://www.w3.org/2000/svg';
const SAFE_DATA_IMAGE = /^data:image\/(png|jpeg|gif|webp);/i;
const LINK_URL = /^(https?:|mailto:)/i;

let svgPurifier: { purify: DOMPurify; serializer: InstanceType<JSDOM['window']['XMLSerializer']> } | null = null;
let htmlPurifier: DOMPurify | null = null;

/** jsdom (~90 MB resident, seconds to load) comes with the first markup to sanitise, not at start. */
function purifierOver(): { window: JSDOM['window']; purify: DOMPurify } {
  const { JSDOM: Dom } = whenNeeded<typeof import('jsdom')>('jsdom');
  const createDOMPurify = whenNeeded<(window: never) => DOMPurify>('dompurify');
  const { window } = new Dom('');
  return { window, purify: createDOMPurify(window as never) };
}

function svgTools() {
  if (svgPurifier) return svgPurifier;
  const { window, purify } = purifierOver();
  purify.addHook('uponSanitizeAttribute', (node, data) => {
    if (data.attrName !== 'href' && data.attrName !== 'xlink:href') return;
    const value = data.attrValue.trim();
    const name = node.nodeName.toLowerCase();
    const allowed = value.startsWith('#') || (name === 'image' && SAFE_DATA_IMAGE.test(value)) || (name === 'a' && LINK_URL.test(value));
    if (!allowed) data.keepAttr = false;
  });
  svgPurifier = { purify, serializer: new window.XMLSerializer() };
  return svgPurifier;
}

const SVG_CONFIG: Config = {
  USE_PROFILES: { svg: true, svgFilters: true },
  FORBID_TAGS: ['foreignObject', 'script', 'use'],
  FORBID_ATTR: ['onload', 'onerror'],
};

/**
 * The sanitised SVG document as well-formed XML (serialised from the DOM,
 * so HTML-only entities such as `&nbsp;` never reach an XML parser), or
 * null when the input holds no `<svg>` root.
 */
export function sanitizeSvg(source: string): string | null {
  const { purify, serializer } = svgTools();
  const body = purify.sanitize(source, { ...SVG_CONFIG, RETURN_DOM: true }) as unknown as Element;
  const root = [...body.children].find((child) => child.namespaceURI === SVG_NS && child.localName === 'svg');
  if (!root) return null;
  return `<?xml version="1.0" encoding="UTF-8"?>\n${serializer.serializeToString(root)}`;
}

function htmlTools(): DOMPurify {
  if (htmlPurifier) return htmlPurifier;
  const { purify } = purifierOver();
  purify.addHook('afterSanitizeAttributes', (node) => {
    // A link that opens elsewhere must not hand the opener to the target page.
    if (node.nodeName.toLowerCase() === 'a' && node.getAttribute('target')) node.setAttribute('rel', 'noopener noreferrer');
  });
  htmlPurifier = purify;
  return purify;
}

const FORM_TAGS = ['form', 'input', 'button', 'select', 'option', 'optgroup', 'textarea', 'datalist', 'output'];

const HTML_CONFIG: Config = {
  USE_PROFILES: { html: true, svg: true, svgFilters: true, mathMl: true },
  FORBID_TAGS: [...FORM_TAGS, 'foreignObject', 'use'],
  ADD_ATTR: ['target'],
  // Keeps a leading <style> (the parser would otherwise move it into <head> and drop it).
  FORCE_BODY: true,
};

/** The sanitised HTML fragment (see the module comment for what stays). */
export function sanitizeHtml(source: string): string {
  return htmlTools().sanitize(source, HTML_CONFIG) as unknown as string;
}

/** Also allows the schemes an import writes itself: `mention:` links and the Word file's own `docx-image:` images. */
const IMPORT_URI = /^(?:(?:(?:f|ht)tps?|mailto|tel|mention|docx-image):|[^a-z]|[a-z+.\-]+(?:[^a-z+.\-:]|$))/i;

export type SanitizedImport = { body: HTMLElement; removed: string[] };

/**
 * HTML on its way into a doc: sanitised as html surfaces are, and what the
 * sanitiser took out named (`<script>`, `onclick`), so the import can say
 * so rather than drop it without a word. Answers the sanitised page's body
 * as the sanitiser left it: writing it out and parsing it again cost the
 * import of a long page as much as the sanitising.
 */
export function sanitizeHtmlForImport(source: string): SanitizedImport {
  const purify = htmlTools();
  const body = purify.sanitize(source, { ...HTML_CONFIG, ALLOWED_URI_REGEXP: IMPORT_URI, RETURN_DOM: true }) as unknown as HTMLElement;
  const removed = purify.removed.map((entry) =>
    'attribute' in entry && entry.attribute ? `${entry.attribute.name} attribute` : `<${(entry as { element: Element }).element.nodeName.toLowerCase()}>`,
  );
  return { body, removed };
}
