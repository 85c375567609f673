import type { OAuthScope } from '../model/permissions';

/**
 * The few server-rendered pages of the OAuth flow: consent, sign-in, "check
 * your e-mail" and errors. Plain HTML with inline styles, no scripts; every
 * value a client registered is escaped, since anyone can register an app.
 * Rendering only, for the OAuth protocol routes of ./oauth.ts (not operations:
 * a browser gets these pages, not JSON).
 */

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** Frames, scripts, plugins and foreign styles are refused: the consent page must not be embeddable (clickjacking). */
export const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'",
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

const STYLE = `
  body { font: 16px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1f2328; background: #f6f8fa; margin: 0; }
  main { max-width: 28rem; margin: 4rem auto; background: #fff; border: 1px solid #d0d7de; border-radius: 12px; padding: 2rem; }
  h1 { font-size: 1.35rem; margin: 0 0 1rem; }
  p { margin: 0 0 1rem; }
  .muted { color: #59636e; font-size: 0.9rem; }
  ul.scopes { list-style: none; padding: 0; margin: 0 0 1.5rem; }
  ul.scopes li { padding: 0.6rem 0; border-top: 1px solid #eaeef2; }
  ul.scopes label { display: flex; gap: 0.6rem; align-items: flex-start; }
  code { background: #eff2f5; padding: 0.1rem 0.3rem; border-radius: 4px; font-size: 0.85rem; word-break: break-all; }
  .actions { display: flex; gap: 0.75rem; }
  button { font: inherit; padding: 0.55rem 1.1rem; border-radius: 8px; border: 1px solid #d0d7de; background: #f6f8fa; cursor: pointer; }
  button.primary { background: #1f883d; border-color: #1f883d; color: #fff; }
  input[type=email] { font: inherit; width: 100%; box-sizing: border-box; padding: 0.5rem; border: 1px solid #d0d7de; border-radius: 8px; margin-bottom: 1rem; }
`;

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)} · Trellis</title><style>${STYLE}</style></head>
<body><main>
${body}
</main></body>
</html>`;
}

export const SCOPE_DESCRIPTIONS: Record<OAuthScope, string> = {
  read: 'Read your workspaces, rows, docs and comments',
  write: 'Create and change rows, columns, docs and comments, and create workspaces',
  admin: 'Manage sharing, members, webhooks and billing of what you administer',
};

export type ConsentView = {
  clientName: string;
  clientUri: string | null;
  redirectUri: string;
  userEmail: string;
  scopes: readonly OAuthScope[];
  /** The authorization request, echoed back as hidden fields (the CSRF token is bound to them). */
  hidden: Record<string, string>;
};

export function consentPage(view: ConsentView): string {
  const redirect = new URL(view.redirectUri);
  const destination = redirect.protocol === 'http:' || redirect.protocol === 'https:' ? redirect.host : redirect.protocol;
  const scopes = view.scopes
    .map((scope) => {
      // `read` is the least any grant carries; the others may be unticked to grant less than was asked.
      const control =
        scope === 'read'
          ? '<input type="checkbox" checked disabled>'
          : `<input type="checkbox" name="grant_${scope}" value="on" checked>`;
      return `<li><label>${control}<span><strong>${scope}</strong><br><span class="muted">${escapeHtml(SCOPE_DESCRIPTIONS[scope])}</span></span></label></li>`;
    })
    .join('\n');
  const hidden = Object.entries(view.hidden)
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join('\n');
  const site = view.clientUri ? `<p class="muted">App website: <code>${escapeHtml(view.clientUri)}</code></p>` : '';
  return page(
    'Authorize app',
    `<h1>${escapeHtml(view.clientName)} wants to use your Trellis account</h1>
<p class="muted">Signed in as ${escapeHtml(view.userEmail)}. The app acts as you, within what you allow here and what your role allows.</p>
${site}
<form method="post" action="/oauth/authorize">
${hidden}
<ul class="scopes">
${scopes}
</ul>
<p class="muted">After you decide, you are sent to <code>${escapeHtml(destination)}</code>. You can revoke access at any time.</p>
<div class="actions">
<button class="primary" type="submit" name="decision" value="approve">Allow</button>
<button type="submit" name="decision" value="deny">Deny</button>
</div>
</form>`,
  );
}

export function signInPage(returnTo: string, clientName: string): string {
  return page(
    'Sign in',
    `<h1>Sign in to continue to ${escapeHtml(clientName)}</h1>
<p>We will e-mail you a sign-in link. It brings you back here to decide what ${escapeHtml(clientName)} may do.</p>
<form method="post" action="/oauth/sign-in">
<input type="hidden" name="return_to" value="${escapeHtml(returnTo)}">
<input type="email" name="email" required autocomplete="email" placeholder="you@example.com" aria-label="E-mail address">
<button class="primary" type="submit">E-mail me a link</button>
</form>`,
  );
}

export function checkMailPage(email: string, waitlisted: boolean): string {
  return waitlisted
    ? page('Waitlisted', `<h1>You are on the waitlist</h1><p>Sign-ups are by invitation for now; we will write to ${escapeHtml(email)} when a place opens.</p>`)
    : page('Check your e-mail', `<h1>Check your e-mail</h1><p>We sent a sign-in link to ${escapeHtml(email)}. Open it in this browser; it works once and expires in 15 minutes.</p>`);
}

export function errorPage(message: string): string {
  return page('Authorization failed', `<h1>This authorization cannot continue</h1><p>${escapeHtml(message)}</p><p class="muted">Go back to the app and try connecting again.</p>`);
}
