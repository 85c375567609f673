/**
 * File and folder names. A name is one path segment shown to people and
 * used as the zip entry and download name, so it may hold any printable
 * text but never something a file system or an archive would read as a
 * path: no `/` or `\`, not `.` or `..`, no control characters, no lone
 * surrogates. Surrounding whitespace is trimmed.
 */

export const MAX_NAME_LENGTH = 255;

/** Why a (trimmed) name is refused, or null when it is fine. */
export function nameProblem(name: string): string | null {
  if (name.length === 0) return 'must not be empty';
  if (name.length > MAX_NAME_LENGTH) return `must be at most ${MAX_NAME_LENGTH} characters`;
  if (/\p{Cs}/u.test(name)) return 'must be well-formed Unicode (no lone surrogates)';
  if (/[/\\]/.test(name)) return 'must not contain path separators (/ or \\)';
  if (name === '.' || name === '..') return 'must not be "." or ".."';
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(name)) return 'must not contain control characters';
  return null;
}

/** `Content-Disposition` for a name: an ASCII fallback and the RFC 5987 UTF-8 form. */
export function contentDisposition(kind: 'inline' | 'attachment', name: string): string {
  const fallback = name.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  return `${kind}; filename="${fallback}"; filename*=UTF-8''${encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}`;
}
