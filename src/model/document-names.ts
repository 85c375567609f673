/**
 * Names of the Y documents clients open at `/api/sync`. Part of the public
 * interface (every surface record carries its `syncDocument`), so they use
 * ids, which never change, rather than slugs, which can be renamed.
 *
 * All table surfaces of a workspace share one document, so a move between
 * sheets is one transaction; each doc or html surface has its own.
 */

export type DocumentKind = 'tables' | 'doc' | 'html';

export function tablesDocumentName(workspaceId: string): string {
  return `${workspaceId}/tables`;
}

export function surfaceDocumentName(workspaceId: string, surface: { id: string; kind: string }): string | null {
  switch (surface.kind) {
    case 'table':
      return tablesDocumentName(workspaceId);
    case 'doc':
      return `${workspaceId}/doc/${surface.id}`;
    case 'html':
      return `${workspaceId}/html/${surface.id}`;
    default:
      return null; // files surfaces have no Y document
  }
}

export type ParsedDocumentName = { workspaceId: string; kind: DocumentKind; surfaceId: string | null };

export function parseDocumentName(name: string): ParsedDocumentName | null {
  const parts = name.split('/');
  if (parts.length === 2 && parts[1] === 'tables' && parts[0]) return { workspaceId: parts[0], kind: 'tables', surfaceId: null };
  if (parts.length === 3 && (parts[1] === 'doc' || parts[1] === 'html') && parts[0] && parts[2]) {
    return { workspaceId: parts[0], kind: parts[1], surfaceId: parts[2] };
  }
  return null;
}
