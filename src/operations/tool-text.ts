/** The annotations and the sentences MCP tool descriptions share (docs/MCP.md). */
export const READ = { readOnlyHint: true, openWorldHint: false } as const;
export const WRITE = { readOnlyHint: false, destructiveHint: false, openWorldHint: false } as const;
export const DESTRUCTIVE = { readOnlyHint: false, destructiveHint: true, openWorldHint: false } as const;
export const PAYMENTS = { ...WRITE, openWorldHint: true } as const;

export const COMMENT = 'Address the comment by `id`; `slug` (and `orgSlug`) are optional and, when given, the comment must be in that workspace.';
export const ADDRESS = 'Address the workspace by `slug` (or its id); add `orgSlug` when the slug exists in several of your organisations.';
export const ORG = '`org` names the organisation by slug; default: your own.';
export const SURFACE = '`surfaceSlug` is a doc, html or table surface (its slug or id, as get_workspace lists them).';
export const VERSION = `${SURFACE} \`versionId\` comes from list_versions.`;
