import type { ColumnType, Generated, Insertable, Selectable, Updateable } from 'kysely';
import type { AuthorKind, PlanName, PrincipalKind, Role, Visibility } from '../model/roles';

/** Table types as Kysely sees them (camelCase through CamelCasePlugin). */

type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;

export type { PlanName, PrincipalKind, Role, Visibility };
export type SurfaceKind = 'table' | 'doc' | 'html' | 'files';

export interface OrgsTable {
  id: string;
  slug: string;
  name: string;
  plan: ColumnType<PlanName, PlanName | undefined, PlanName>;
  defaultWorkspaceVisibility: ColumnType<'org' | 'private', 'org' | 'private' | undefined, 'org' | 'private'>;
  personal: ColumnType<boolean, boolean | undefined, boolean>;
  paymentCustomerId: string | null;
  paymentSubscriptionId: string | null;
  pendingDowngradeAt: NullableTimestamp;
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

export interface PrincipalsTable {
  id: string;
  kind: PrincipalKind;
  name: string;
  avatarUrl: string | null;
  createdAt: Timestamp;
}

export interface UsersTable {
  id: string;
  email: string;
  primaryOrgId: string | null;
  createdAt: Timestamp;
  lastSignInAt: NullableTimestamp;
}

export interface AgentsTable {
  id: string;
  orgId: string;
  ownerUserId: string;
  modelHint: string | null;
  createdAt: Timestamp;
  lastUsedAt: NullableTimestamp;
}

export interface OrgMembersTable {
  orgId: string;
  userId: string;
  role: Role;
  joinedAt: Timestamp;
}

export interface SessionsTable {
  id: string;
  tokenHash: string;
  userId: string;
  createdAt: Timestamp;
  lastSeenAt: Timestamp;
  expiresAt: Timestamp;
  revokedAt: NullableTimestamp;
  userAgent: string | null;
}

export interface MagicLinksTable {
  tokenHash: string;
  email: string;
  createdAt: Timestamp;
  expiresAt: Timestamp;
  usedAt: NullableTimestamp;
  /** Where the redeemed link goes (a path on this server), e.g. back to an OAuth consent page. */
  returnTo: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface ElevationGrantsTable {
  sessionId: string;
  scope: string;
  expiresAt: Timestamp;
}

export interface ElevationCodesTable {
  sessionId: string;
  scope: string;
  codeHash: string;
  expiresAt: Timestamp;
  attempts: ColumnType<number, number | undefined, number>;
}

export interface WorkspacesTable {
  id: string;
  orgId: string;
  slug: string;
  name: string;
  mode: 'table' | 'doc';
  visibility: Visibility;
  commentsOnPublicShare: ColumnType<boolean, boolean | undefined, boolean>;
  /** IANA zone name (docs/FORMULAS.md "Time zone"). */
  timeZone: ColumnType<string, string | undefined, string>;
  createdAt: Timestamp;
  updatedAt: Timestamp;
  createdById: string | null;
  createdByType: PrincipalKind | null;
  archivedAt: NullableTimestamp;
  archivedById: string | null;
  archivedByType: PrincipalKind | null;
}

export interface SurfacesTable {
  id: string;
  workspaceId: string;
  slug: string;
  kind: SurfaceKind;
  name: string;
  position: number;
  createdAt: Timestamp;
  deletedAt: NullableTimestamp;
  /** Slugs the surface had before renames, newest first; they still address it (migration 0084). */
  formerSlugs: ColumnType<string[], never, string[]>;
  /** The surface it is nested under (a page under its parent page), or null (migration 0130). */
  parentId: ColumnType<string | null, string | null | undefined, string | null>;
}

export type JobError = { path: string; message: string };

/** Work answered before it is done (a workspace import), with its progress (migration 0130). */
export interface JobsTable {
  id: string;
  orgId: string;
  kind: 'workspace_import';
  principalId: string;
  principalType: PrincipalKind;
  status: ColumnType<'running' | 'done' | 'failed', 'running' | undefined, 'running' | 'done' | 'failed'>;
  progressDone: ColumnType<number, number | undefined, number>;
  progressTotal: ColumnType<number, number | undefined, number>;
  workspaceId: string | null;
  errors: ColumnType<JobError[], string | undefined, string>;
  createdAt: Timestamp;
  heartbeatAt: Timestamp;
  finishedAt: NullableTimestamp;
}

export interface MembershipsTable {
  workspaceId: string;
  principalId: string;
  principalType: PrincipalKind;
  role: Role;
  viaUserId: string | null;
  pinnedAt: NullableTimestamp;
  joinedAt: Timestamp;
}

export interface ApiKeysTable {
  id: string;
  orgId: string;
  agentId: string;
  ownerUserId: string;
  name: string;
  prefix: string;
  secretHash: string;
  scopeWorkspaceId: string | null;
  role: Exclude<Role, 'owner'>;
  /** Its writes to docs and rows can only be suggestions (docs/SUGGESTIONS.md). */
  suggestOnly: ColumnType<boolean, boolean | undefined, boolean>;
  createdAt: Timestamp;
  lastUsedAt: NullableTimestamp;
  revokedAt: NullableTimestamp;
}

export interface SuggestionsTable {
  id: string;
  workspaceId: string;
  surfaceId: string;
  target: 'doc' | 'row';
  rowId: string | null;
  status: ColumnType<'open' | 'accepted' | 'rejected', 'open' | 'accepted' | 'rejected' | undefined, 'open' | 'accepted' | 'rejected'>;
  authorType: PrincipalKind;
  authorId: string;
  createdAt: Timestamp;
  decidedByType: PrincipalKind | null;
  decidedById: string | null;
  decidedAt: NullableTimestamp;
  summary: ColumnType<string, string | undefined, string>;
}

export interface InvitesTable {
  id: string;
  kind: 'workspace' | 'org';
  orgId: string;
  workspaceId: string | null;
  email: string;
  role: Role;
  tokenHash: string;
  invitedById: string;
  createdAt: Timestamp;
  lastSentAt: Timestamp;
  expiresAt: Timestamp;
  acceptedAt: NullableTimestamp;
  acceptedByUserId: string | null;
  revokedAt: NullableTimestamp;
}

export interface WaitlistTable {
  email: string;
  source: string | null;
  ref: string | null;
  allowed: ColumnType<boolean, boolean | undefined, boolean>;
  createdAt: Timestamp;
}

export interface IdempotencyKeysTable {
  owner: string;
  key: string;
  requestHash: string;
  statusCode: number;
  responseBody: string;
  createdAt: Timestamp;
}

export interface ApiUsageTable {
  orgId: string;
  period: string;
  calls: ColumnType<number, number | undefined, number>;
}

export interface EventsTable {
  seq: Generated<number>;
  orgId: string;
  workspaceId: string | null;
  event: string;
  subjectId: string | null;
  principalId: string | null;
  record: ColumnType<unknown, string, string>;
  createdAt: Timestamp;
  /** Events derived from a logged update: `<document>:<seq>:<n>`, recorded once however often derived. */
  dedupeKey: ColumnType<string | null, string | null | undefined, never>;
}

export interface DocumentUpdatesTable {
  seq: Generated<number>;
  document: string;
  update: Uint8Array;
  createdAt: ColumnType<Date, Date | string | undefined, never>;
  principalType: ColumnType<AuthorKind | null, AuthorKind | null | undefined, never>;
  principalId: ColumnType<string | null, string | null | undefined, never>;
  /** Migration 0090: the number of the instance that logged a client's update (null: a server change, or logged before). */
  writer: ColumnType<number | null, number | null | undefined, never>;
  /** Migration 0100: the run the update joined (docs/RUNS.md), null for none. */
  runId: ColumnType<string | null, string | null | undefined, never>;
  /** Migration 0180: a run's first sequence number (null: the row is one update, at `seq`); read a row with `updatesOfLogRow`. */
  firstSeq: ColumnType<number | string | null, number | null | undefined, never>;
}

/** Migration 0160: sync clients' updates whose events and projections are still to commit, a row per append statement (per document and writer). */
export interface UnderivedUpdatesTable {
  document: string;
  writer: number | null;
  seqs: ColumnType<Array<number | string>, string, string>;
}

/** Migration 0100: a unit of one principal's work in a workspace (docs/RUNS.md). */
export interface RunsTable {
  id: string;
  workspaceId: string;
  name: string;
  principalType: PrincipalKind;
  principalId: string;
  /** Automatic runs: the key (`key:<id>`) or OAuth grant (`oauth:<id>`) they collect the writes of. */
  actorKey: string | null;
  automatic: ColumnType<boolean, boolean | undefined, boolean>;
  /** A revert's run: the run it undid. */
  reverts: string | null;
  startedAt: Timestamp;
  endedAt: NullableTimestamp;
  lastWriteAt: NullableTimestamp;
}

/** Migration 0100: what a run changed, in order (src/model/schemas/runs.ts describes `change`). */
export interface RunChangesTable {
  runId: string;
  seq: Generated<number>;
  document: string;
  surfaceId: string | null;
  kind: string;
  change: ColumnType<unknown, string, string>;
}

/** Migration 0090: one row per process that served sync (src/persistence/instances.ts). */
export interface SyncInstancesTable {
  number: Generated<number>;
  name: string;
  startedAt: ColumnType<Date, Date | string | undefined, never>;
}

/** Migration 0081: the clock ranges of folded updates and their principals (docs/ATTRIBUTION.md). */
export interface DocumentAttributionTable {
  document: string;
  client: number;
  clockFrom: number;
  clockTo: number;
  principalType: PrincipalKind | null;
  principalId: string | null;
}

/** Migration 0060: the row every append to a document's log and every compaction of it locks first. */
export interface DocumentLogHeadsTable {
  document: string;
  writer: string | null;
  updatedAt: ColumnType<Date, Date | string | undefined, Date | string>;
}

export interface DocumentSnapshotsTable {
  document: string;
  state: Uint8Array;
  /** The same state as a V1 update, as the sync protocol sends it (large documents; null when not written). */
  syncState: ColumnType<Uint8Array | null, Uint8Array | null | undefined, Uint8Array | null>;
  uptoSeq: number;
  updatedAt: Timestamp;
}

export interface TableRowsTable {
  id: string;
  workspaceId: string;
  surfaceId: string | null;
  position: number;
  data: ColumnType<Record<string, unknown>, string, string>;
  createdById: string | null;
  createdByType: AuthorKind | null;
  updatedById: string | null;
  updatedByType: AuthorKind | null;
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

/** Date cells of projected rows, for windowed reads (migration 0120, src/persistence/row-indexes.ts). */
export interface RowDatesTable {
  workspaceId: string;
  rowId: string;
  columnKey: string;
  at: Date;
  reachDays: number;
  spanClass: number;
}

/** Files that rows' cells name (attachment cells). */
export interface RowFilesTable {
  workspaceId: string;
  rowId: string;
  fileId: string;
}

/** The public token of a form view. */
export interface FormLinksTable {
  token: string;
  workspaceId: string;
  viewId: string;
  createdAt: Timestamp;
}

export interface DocSectionsTable {
  workspaceId: string;
  surfaceId: string;
  idx: number;
  heading: string | null;
  level: number;
  text: string;
  updatedAt: Timestamp;
}

/** A doc section's searched text in parts (src/persistence/doc-sections.ts `searchParts`), the trigram index's rows. */
export interface DocSectionPartsTable {
  workspaceId: string;
  surfaceId: string;
  idx: number;
  /** md5 (hex) of `searchText`. */
  hash: string;
  searchText: string;
}

export interface SurfaceVersionsTable {
  id: string;
  workspaceId: string;
  surfaceId: string;
  document: string;
  kind: 'auto' | 'named';
  name: string | null;
  seq: ColumnType<number, number, number>;
  startPoint: ColumnType<boolean, boolean | undefined, boolean>;
  createdAt: Timestamp;
  principalType: PrincipalKind | null;
  principalId: string | null;
  editors: ColumnType<unknown, string, string>;
  changes: ColumnType<unknown, string, string>;
  content: Uint8Array;
  contentBytes: number;
  /** Set on the version a restore made (migration 0073): the restored version as it was then. */
  restoredFrom: ColumnType<unknown, string | null | undefined, string | null>;
}

export interface VersionCursorsTable {
  document: string;
  uptoSeq: ColumnType<number, number, number>;
  historyFromSeq: ColumnType<number, number, number>;
  historyFrom: NullableTimestamp;
  sessions: ColumnType<unknown, string, string>;
  /** Migration 0071: the document's state at `uptoSeq` (Yjs update V2), null before the first pass that wrote one. */
  state: ColumnType<Uint8Array | null, Uint8Array | null | undefined, Uint8Array | null>;
}

export interface DocumentHoldsTable {
  document: string;
  bucket: Timestamp;
  seq: ColumnType<number, number, number>;
}

export type CommentTargetType = 'row' | 'cell' | 'doc_range' | 'html_element' | 'surface' | 'workspace' | 'file';

export interface CommentsTable {
  id: string;
  workspaceId: string;
  parentId: string | null;
  targetType: CommentTargetType;
  targetId: string;
  surfaceId: string | null;
  columnId: string | null;
  columnKey: string | null;
  anchor: ColumnType<Record<string, unknown> | null, string | null, string | null>;
  body: string;
  mentions: ColumnType<Array<{ kind: PrincipalKind; id: string; label: string }>, string, string>;
  authorId: string;
  authorType: PrincipalKind;
  correlationId: string | null;
  resolvedAt: NullableTimestamp;
  resolvedById: string | null;
  resolvedByType: PrincipalKind | null;
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

/** A person's "Mark all read" on their mentions inbox (migration 0091). */
export interface ReadThroughTable {
  principalId: string;
  readThrough: Timestamp;
}

/** A mention read one by one after `read_through`. */
export interface ReadMarksTable {
  principalId: string;
  commentId: string;
  readAt: Timestamp;
}

export interface CommentReactionsTable {
  commentId: string;
  principalId: string;
  principalType: PrincipalKind;
  emoji: string;
  createdAt: Timestamp;
}

export interface InboxMessagesTable {
  seq: Generated<number>;
  id: string;
  recipientId: string;
  orgId: string;
  workspaceId: string | null;
  kind: string;
  payload: ColumnType<Record<string, unknown>, string, string>;
  createdAt: Timestamp;
}

export interface InboxWakeDedupTable {
  recipientId: string;
  threadKey: string;
  wokenAt: Timestamp;
}

export interface MessageUsageTable {
  orgId: string;
  period: string;
  delivered: ColumnType<number, number | undefined, number>;
}

export type FileExif = { width: number; height: number; orientation: number };
type Json<T> = ColumnType<T, string, string>;

export interface FileFoldersTable {
  id: string;
  workspaceId: string;
  surfaceId: string;
  parentFolderId: string | null;
  name: string;
  createdAt: Timestamp;
  createdById: string | null;
  createdByType: PrincipalKind | null;
  updatedAt: Timestamp;
  archivedAt: NullableTimestamp;
  archivedById: string | null;
  archivedByType: PrincipalKind | null;
  archivedWithId: string | null;
}

export interface FilesTable {
  id: string;
  orgId: string;
  workspaceId: string;
  surfaceId: string;
  parentFolderId: string | null;
  name: string;
  size: number;
  contentType: string;
  blobKey: string;
  thumbKey: string | null;
  sha256: string;
  exif: ColumnType<FileExif | null, string | null, string | null>;
  version: ColumnType<number, number | undefined, number>;
  starred: ColumnType<boolean, boolean | undefined, boolean>;
  starredAt: NullableTimestamp;
  description: string | null;
  tags: Json<string[]>;
  createdAt: Timestamp;
  createdById: string | null;
  createdByType: AuthorKind | null;
  updatedAt: Timestamp;
  updatedById: string | null;
  updatedByType: AuthorKind | null;
  archivedAt: NullableTimestamp;
  archivedById: string | null;
  archivedByType: PrincipalKind | null;
  archivedWithFolderId: string | null;
  /** Uploaded into an attachment cell (or a form), not into the drive: trashed once no row names it. */
  cellUpload: ColumnType<boolean, boolean | undefined, boolean>;
}

export interface FileShareTokensTable {
  id: string;
  fileId: string;
  token: string;
  createdAt: Timestamp;
  createdById: string | null;
  createdByType: PrincipalKind | null;
  revokedAt: NullableTimestamp;
}

export interface FileUploadsTable {
  id: string;
  tokenHash: string;
  orgId: string;
  workspaceId: string;
  surfaceId: string;
  parentFolderId: string | null;
  name: string;
  size: number;
  contentType: string;
  blobKey: string;
  reservationId: string;
  state: ColumnType<'pending' | 'receiving' | 'completed', 'pending' | undefined, 'pending' | 'receiving' | 'completed'>;
  fileId: string | null;
  createdById: string;
  createdByType: PrincipalKind;
  createdAt: Timestamp;
  expiresAt: Timestamp;
}

export interface OrgStorageTable {
  orgId: string;
  usedBytes: ColumnType<number, number | undefined, number>;
  quotaBytes: number | null;
}

export interface StorageReservationsTable {
  id: string;
  orgId: string;
  bytes: number;
  blobKeys: Json<string[]>;
  createdAt: Timestamp;
  expiresAt: Timestamp;
}

export type StoredBlobKind = 'file' | 'thumbnail' | 'doc_image' | 'avatar' | 'support';

export interface StoredBlobsTable {
  key: string;
  orgId: string;
  size: number;
  kind: StoredBlobKind;
  createdAt: Timestamp;
}

export interface WebhooksTable {
  id: string;
  orgId: string;
  workspaceId: string | null;
  url: string;
  events: string[];
  secretCiphertext: string;
  active: ColumnType<boolean, boolean | undefined, boolean>;
  createdById: string | null;
  createdAt: Timestamp;
  updatedAt: Timestamp;
  failingSince: NullableTimestamp;
  deactivatedAt: NullableTimestamp;
  deactivationReason: string | null;
  catchupAfterSeq: number | null;
  leaseOwner: string | null;
  leaseUntil: NullableTimestamp;
}

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';

export interface WebhookDeliveriesTable {
  id: Generated<string>;
  webhookId: string;
  orgId: string;
  eventSeq: number;
  event: string;
  status: ColumnType<DeliveryStatus, DeliveryStatus | undefined, DeliveryStatus>;
  attempts: ColumnType<number, number | undefined, number>;
  responseStatus: number | null;
  error: string | null;
  durationMs: number | null;
  createdAt: Timestamp;
  nextAttemptAt: NullableTimestamp;
  lastAttemptAt: NullableTimestamp;
  attemptingUntil: NullableTimestamp;
}

export interface WebhookUsageTable {
  orgId: string;
  period: string;
  delivered: ColumnType<number, number | undefined, number>;
}

export type OAuthClientAuthMethod = 'none' | 'client_secret_post' | 'client_secret_basic';

export interface OAuthClientsTable {
  id: string;
  secretHash: string | null;
  name: string;
  redirectUris: ColumnType<string[], string, string>;
  tokenEndpointAuthMethod: OAuthClientAuthMethod;
  scope: string | null;
  /** The registered client metadata (RFC 7591) as stored, echoed by registration. */
  metadata: ColumnType<Record<string, unknown>, string, string>;
  createdAt: Timestamp;
}

export interface OAuthGrantsTable {
  id: string;
  clientId: string;
  userId: string;
  /** Space-separated, as OAuth writes scopes. */
  scopes: string;
  resource: string | null;
  createdAt: Timestamp;
  lastUsedAt: NullableTimestamp;
  /** When its newest refresh token expires: an unused grant lapses then. */
  expiresAt: Timestamp;
  revokedAt: NullableTimestamp;
  revokedReason: string | null;
}

export interface OAuthAuthorizationCodesTable {
  codeHash: string;
  clientId: string;
  userId: string;
  redirectUri: string;
  redirectUriExplicit: boolean;
  codeChallenge: string;
  scopes: string;
  resource: string | null;
  createdAt: Timestamp;
  expiresAt: Timestamp;
  usedAt: NullableTimestamp;
  grantId: string | null;
}

export interface OAuthTokensTable {
  id: string;
  grantId: string;
  kind: 'access' | 'refresh';
  tokenHash: string;
  createdAt: Timestamp;
  expiresAt: Timestamp;
  /** Refresh tokens: when it was exchanged for a new pair. Presenting it again is reuse. */
  rotatedAt: NullableTimestamp;
  revokedAt: NullableTimestamp;
}

export interface McpConfirmationsTable {
  tokenHash: string;
  caller: string;
  tool: string;
  argumentsHash: string;
  createdAt: Timestamp;
  expiresAt: Timestamp;
}

export interface LocalPaymentCustomersTable {
  id: string;
  orgId: string;
  cardBrand: string | null;
  cardLast4: string | null;
  cardExpMonth: number | null;
  cardExpYear: number | null;
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

export interface LocalPaymentSessionsTable {
  id: string;
  tokenHash: string;
  kind: 'checkout' | 'portal';
  orgId: string;
  plan: Exclude<PlanName, 'free'> | null;
  createdById: string;
  createdAt: Timestamp;
  expiresAt: Timestamp;
  completedAt: NullableTimestamp;
}

export interface LimitIncreaseRequestsTable {
  id: string;
  orgId: string;
  kind: string;
  desiredValue: number;
  currentCap: number | null;
  plan: PlanName;
  reason: string;
  requestedById: string;
  requestedByType: PrincipalKind;
  createdAt: Timestamp;
}

export interface SupportTicketsTable {
  id: string;
  orgId: string;
  kind: string;
  title: string;
  body: string;
  context: ColumnType<Record<string, unknown> | null, string | null, string | null>;
  attachmentUrls: ColumnType<string[], string, string>;
  status: ColumnType<'open' | 'closed', 'open' | 'closed' | undefined, 'open' | 'closed'>;
  trackerNumber: number | null;
  trackerUrl: string | null;
  createdById: string;
  createdByType: PrincipalKind;
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

export interface LocalTrackerIssuesTable {
  orgId: string;
  number: number;
  ticketId: string;
  createdAt: Timestamp;
}

export interface LocalTrackerCountersTable {
  orgId: string;
  lastNumber: number;
}

export interface ReferralCodesTable {
  userId: string;
  code: string;
  createdAt: Timestamp;
}

export interface ReferralClicksTable {
  id: string;
  code: string;
  refereeEmailHash: string | null;
  via: string | null;
  visitorHash: string;
  createdAt: Timestamp;
}

export interface ReferralSignupsTable {
  userId: string;
  code: string;
  signedUpAt: Timestamp;
  activatedAt: NullableTimestamp;
}

export interface Database {
  jobs: JobsTable;
  orgs: OrgsTable;
  principals: PrincipalsTable;
  users: UsersTable;
  agents: AgentsTable;
  orgMembers: OrgMembersTable;
  sessions: SessionsTable;
  magicLinks: MagicLinksTable;
  elevationGrants: ElevationGrantsTable;
  elevationCodes: ElevationCodesTable;
  workspaces: WorkspacesTable;
  surfaces: SurfacesTable;
  memberships: MembershipsTable;
  apiKeys: ApiKeysTable;
  suggestions: SuggestionsTable;
  invites: InvitesTable;
  waitlist: WaitlistTable;
  idempotencyKeys: IdempotencyKeysTable;
  apiUsage: ApiUsageTable;
  events: EventsTable;
  documentUpdates: DocumentUpdatesTable;
  underivedUpdates: UnderivedUpdatesTable;
  runs: RunsTable;
  runChanges: RunChangesTable;
  documentSnapshots: DocumentSnapshotsTable;
  documentAttribution: DocumentAttributionTable;
  documentLogHeads: DocumentLogHeadsTable;
  syncInstances: SyncInstancesTable;
  tableRows: TableRowsTable;
  rowDates: RowDatesTable;
  rowFiles: RowFilesTable;
  formLinks: FormLinksTable;
  docSections: DocSectionsTable;
  docSectionParts: DocSectionPartsTable;
  surfaceVersions: SurfaceVersionsTable;
  versionCursors: VersionCursorsTable;
  documentHolds: DocumentHoldsTable;
  comments: CommentsTable;
  commentReactions: CommentReactionsTable;
  readThrough: ReadThroughTable;
  readMarks: ReadMarksTable;
  inboxMessages: InboxMessagesTable;
  inboxWakeDedup: InboxWakeDedupTable;
  messageUsage: MessageUsageTable;
  fileFolders: FileFoldersTable;
  files: FilesTable;
  fileShareTokens: FileShareTokensTable;
  fileUploads: FileUploadsTable;
  orgStorage: OrgStorageTable;
  storageReservations: StorageReservationsTable;
  storedBlobs: StoredBlobsTable;
  webhooks: WebhooksTable;
  webhookDeliveries: WebhookDeliveriesTable;
  webhookUsage: WebhookUsageTable;
  oauthClients: OAuthClientsTable;
  oauthGrants: OAuthGrantsTable;
  oauthAuthorizationCodes: OAuthAuthorizationCodesTable;
  oauthTokens: OAuthTokensTable;
  mcpConfirmations: McpConfirmationsTable;
  localPaymentCustomers: LocalPaymentCustomersTable;
  localPaymentSessions: LocalPaymentSessionsTable;
  limitIncreaseRequests: LimitIncreaseRequestsTable;
  supportTickets: SupportTicketsTable;
  localTrackerIssues: LocalTrackerIssuesTable;
  localTrackerCounters: LocalTrackerCountersTable;
  referralCodes: ReferralCodesTable;
  referralClicks: ReferralClicksTable;
  referralSignups: ReferralSignupsTable;
}

export type Org = Selectable<OrgsTable>;
export type User = Selectable<UsersTable>;
export type Workspace = Selectable<WorkspacesTable>;
export type Surface = Selectable<SurfacesTable>;
export type RunRow = Selectable<RunsTable>;
export type Membership = Selectable<MembershipsTable>;
export type ApiKey = Selectable<ApiKeysTable>;
export type FileRow = Selectable<FilesTable>;
export type FolderRow = Selectable<FileFoldersTable>;
export type FileUploadRow = Selectable<FileUploadsTable>;
export type NewWorkspace = Insertable<WorkspacesTable>;
export type WorkspaceUpdate = Updateable<WorkspacesTable>;
