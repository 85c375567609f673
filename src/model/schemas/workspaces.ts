import { z } from 'zod';
import { IsoDateTime, Principal, Role, Visibility } from './common';

/**
 * Workspace and surface records as every route shows them (SPEC, "Workspace"
 * and "Surface"). The presenters that build them from domain views are in
 * src/api/workspace-schemas.ts; the web app reads these types.
 */

export const SurfaceKind = z.enum(['table', 'doc', 'html', 'files']);
export const WorkspaceMode = z.enum(['table', 'doc']);

export const Surface = z
  .object({
    id: z.string(),
    slug: z.string().describe('Its address, made from its name; a rename makes a new one'),
    formerSlugs: z.array(z.string()).describe('Slugs it had before renames, newest first: they still address it (reserved for it while it lives)'),
    kind: SurfaceKind,
    name: z.string(),
    position: z.number().int().describe('Order among the workspace\'s surfaces, from 0; new surfaces go last'),
    parentId: z.string().nullable().describe('The surface this one is nested under (a page under its parent page, as an imported folder had it), or null'),
    createdAt: IsoDateTime,
    syncDocument: z
      .string()
      .nullable()
      .describe('Name of the Y document to open at /api/sync for this surface; all table surfaces share one. Null for files surfaces, which have none.'),
  })
  .meta({ id: 'Surface' });

export const Workspace = z
  .object({
    id: z.string(),
    slug: z.string(),
    name: z.string(),
    mode: WorkspaceMode.describe('Which kind of surface opens first; a hint only'),
    visibility: Visibility,
    createdAt: IsoDateTime,
    archivedAt: IsoDateTime.nullable(),
    pinnedAt: IsoDateTime.nullable().describe('When the calling principal pinned it; pins are per principal'),
    role: Role.describe("The caller's effective role; `viewer` for public readers"),
    createdBy: Principal.nullable().describe('Null on legacy rows that predate attribution'),
    org: z.object({ slug: z.string() }),
    primarySurface: Surface.optional().describe('The first surface of the workspace\'s mode, else the first surface; absent when it has none'),
    commentsOnPublicShare: z.boolean(),
    timeZone: z.string().describe('IANA time zone name that TODAY() and NOW() in formula columns read in (docs/FORMULAS.md "Time zone"); `UTC` unless set'),
    archivedByPrincipalId: z.string().optional().describe('Archived workspaces only'),
    archivedByPrincipalType: z.enum(['user', 'agent']).optional().describe('Archived workspaces only'),
  })
  .meta({ id: 'Workspace' });

/**
 * A column as workspace detail shows it (SPEC, "ColumnDef"). Additional
 * properties are kept, as the spec allows. Not registered under an id here:
 * the columns routes own the shared ColumnDef schema.
 */
const DetailColumn = z.looseObject({
  id: z.string(),
  key: z.string(),
  label: z.string(),
  type: z.string(),
  position: z.number().int(),
  width: z.number().int().optional(),
  hidden: z.boolean().optional(),
  description: z.string().optional(),
  options: z.array(z.looseObject({ value: z.string(), label: z.string(), color: z.string().optional() })).optional(),
});

export const WorkspaceDetail = Workspace.extend({
  org: z.object({ slug: z.string(), name: z.string() }),
  columns: z.array(DetailColumn).describe('Columns of the primary table surface (the first table surface); empty without one'),
  memberCount: z.number().int().describe('Membership rows: humans and agents'),
  surfaces: z.array(Surface).describe('Live surfaces in position order'),
}).meta({ id: 'WorkspaceDetail' });

export type SurfaceKind = z.infer<typeof SurfaceKind>;
export type SurfaceRecord = z.infer<typeof Surface>;
export type WorkspaceRecord = z.infer<typeof Workspace>;
export type WorkspaceDetailRecord = z.infer<typeof WorkspaceDetail>;

export { flagOn, QueryFlag } from './common';

export const WorkspaceList = z.object({ workspaces: z.array(Workspace) }).meta({ id: 'WorkspaceList' });
export type WorkspaceList = z.infer<typeof WorkspaceList>;

/** An html surface's page. */
export const HtmlPage = z.object({ surfaceId: z.string(), html: z.string() }).meta({ id: 'HtmlPage' });
export type HtmlPage = z.infer<typeof HtmlPage>;
