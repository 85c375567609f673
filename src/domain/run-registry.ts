import type { Logger } from 'pino';
import { ApiError } from '../errors';
import { emitEvents, type EventDeps } from '../events/emit';
import type { Clock } from '../lib/clock';
import { newId } from '../lib/ids';
import { PeriodicJob } from '../lib/periodic-job';
import type { EventName } from '../model/event-names';
import type { EventDraft } from '../model/event-record';
import type { Db } from '../persistence/database';
import { endRun, findOpenAutomaticRun, findRun, insertRun, listIdleAutomaticRuns } from '../persistence/runs';
import type { RunRow } from '../persistence/schema';
import { findWorkspaceEventContext } from '../persistence/table-rows';
import { findPrincipals } from '../persistence/workspaces';
import { actorKey, type Actor, type Principal } from '../policy/actor';

/**
 * Which run a write joins (docs/RUNS.md): the run its caller names, or,
 * for an API key or OAuth app that names none, the automatic run of that
 * key in that workspace, which ends after 15 minutes without writes.
 * Opening, ending and announcing runs (`run.started`, `run.ended`).
 */

export const AUTOMATIC_RUN_IDLE_MS = 15 * 60 * 1000;

export type RunDeps = EventDeps & { db: Db; clock: Clock; log: Logger };

export const runErrors = {
  notFound: () => new ApiError(404, 'run_not_found', 'No such run: it does not exist, belongs to another workspace, or another principal started it. Start one with POST /runs.'),
  ended: (id: string) => new ApiError(409, 'run_ended', `Run ${id} has ended and takes no more writes; start another one.`),
};

type Joined = { id: string; principalId: string };

/**
 * Which run a write joins, decided once per request (REST, MCP) or per
 * update (sync), and the automatic runs of keys, kept here so a busy agent
 * costs no lookup per write.
 */
export class RunRegistry {
  /** `workspaceId\0actorKey` → its automatic run and when this process last saw it write. */
  private readonly automatic = new Map<string, { id: string; principalId: string; lastWrite: number }>();
  private readonly opening = new Map<string, Promise<Joined>>();
  /** Runs found open, and when: a sync connection's run is re-checked at most once a second. */
  private readonly openSeen = new Map<string, number>();
  /** Whose and where the runs in `openSeen` are (they never change). */
  private readonly namedSeen = new Map<string, { workspaceId: string; principalId: string }>();
  readonly idleRuns: PeriodicJob<number>;

  constructor(private readonly services: RunDeps) {
    this.idleRuns = new PeriodicJob(
      () => this.endIdleRuns(),
      (error) => services.log.warn({ err: error }, 'could not end idle automatic runs'),
      { intervalMs: 60_000, firstRunAfterMs: 5_000 },
    );
  }

  /**
   * The run a write by `actor` in `workspaceId` joins: `requested` (which
   * must be the actor's own open run in that workspace: 404 `run_not_found`,
   * 409 `run_ended`), else the automatic run of a key or OAuth app, else
   * none (people's writes in the app join a run only when they name one).
   */
  async join(actor: Actor, workspaceId: string, requested: string | null): Promise<Joined | null> {
    if (requested !== null) {
      await this.writable(actor.principal.id, workspaceId, requested);
      return { id: requested, principalId: actor.principal.id };
    }
    if (actor.via === 'session') return null;
    return this.automaticRun(actor, workspaceId);
  }

  /**
   * Checks that `id` is the actor's own open run in the workspace, else
   * throws the error a write naming it gets. A run found open is trusted
   * for a second (as a sync connection's is), so an agent writing in a
   * loop costs no lookup per write; ending it through this process is
   * seen at once, through another within that second.
   */
  async writable(principalId: string, workspaceId: string, id: string): Promise<void> {
    const known = this.namedSeen.get(id);
    const seen = this.openSeen.get(id);
    if (known && seen !== undefined && Date.now() - seen < 1_000) {
      if (known.workspaceId !== workspaceId || known.principalId !== principalId) throw runErrors.notFound();
      return;
    }
    const run = await findRun(this.services.db, id);
    if (!run || run.workspaceId !== workspaceId || run.principalId !== principalId) throw runErrors.notFound();
    if (statusOf(run, this.services.clock.now()) === 'ended') throw runErrors.ended(id);
    // Runs nobody ends stay in these maps: start them over past a bound rather than grow without one.
    if (this.namedSeen.size >= 10_000) {
      this.namedSeen.clear();
      this.openSeen.clear();
    }
    this.openSeen.set(id, Date.now());
    this.namedSeen.set(id, { workspaceId: run.workspaceId, principalId: run.principalId });
    if (run.automatic && run.actorKey) this.automatic.set(`${workspaceId}\u0000${run.actorKey}`, { id, principalId, lastWrite: this.services.clock.now().getTime() });
  }

  /** Whether a run named by an open sync connection still takes writes (looked up at most once a second). */
  async stillOpen(id: string): Promise<boolean> {
    const seen = this.openSeen.get(id);
    if (seen !== undefined && Date.now() - seen < 1_000) return true;
    const run = await findRun(this.services.db, id);
    const open = Boolean(run) && statusOf(run!, this.services.clock.now()) === 'open';
    if (open) this.openSeen.set(id, Date.now());
    else this.forget(id);
    return open;
  }

  /** The automatic run of a key or OAuth app in a workspace: the current one, or a new one when it has been idle 15 minutes. */
  automaticRun(actor: Actor, workspaceId: string): Promise<Joined> {
    const key = `${workspaceId}\u0000${actorKey(actor)}`;
    const now = this.services.clock.now().getTime();
    const known = this.automatic.get(key);
    if (known && now - known.lastWrite < AUTOMATIC_RUN_IDLE_MS) {
      known.lastWrite = now;
      return Promise.resolve(known);
    }
    let opening = this.opening.get(key);
    if (!opening) {
      opening = this.openAutomatic(actor, workspaceId, key).finally(() => this.opening.delete(key));
      this.opening.set(key, opening);
    }
    return opening;
  }

  private async openAutomatic(actor: Actor, workspaceId: string, key: string): Promise<Joined> {
    const now = this.services.clock.now();
    const current = await findOpenAutomaticRun(this.services.db, workspaceId, actorKey(actor));
    if (current && statusOf(current, now) === 'open') {
      this.automatic.set(key, { id: current.id, principalId: current.principalId, lastWrite: now.getTime() });
      return { id: current.id, principalId: current.principalId };
    }
    if (current) await this.end(current, idleEnd(current));
    const run = await insertRun(this.services.db, {
      id: newId('run'),
      workspaceId,
      name: `${actor.principal.name}${actor.oauth ? ` via ${actor.oauth.clientName}` : ''}, ${now.toISOString().slice(0, 16).replace('T', ' ')} UTC`,
      principal: actor.principal,
      automatic: true,
      actorKey: actorKey(actor),
      reverts: null,
      startedAt: now,
    });
    await this.announce('run.started', run, actor.principal);
    this.automatic.set(key, { id: run.id, principalId: run.principalId, lastWrite: now.getTime() });
    return { id: run.id, principalId: run.principalId };
  }

  /** Starts a run by `actor`; `reverts`: a revert's own run. */
  async start(actor: Pick<Actor, 'principal'>, workspaceId: string, name: string, reverts: string | null = null): Promise<RunRow> {
    const run = await insertRun(this.services.db, {
      id: newId('run'),
      workspaceId,
      name,
      principal: actor.principal,
      automatic: false,
      actorKey: null,
      reverts,
      startedAt: this.services.clock.now(),
    });
    await this.announce('run.started', run, actor.principal);
    return run;
  }

  /** Ends a run (once: ending an ended run changes nothing); `run.ended` carries the principal who ended it. */
  async end(run: RunRow, at: Date = this.services.clock.now(), by: Principal | null = null): Promise<RunRow> {
    const ended = await endRun(this.services.db, run.id, at);
    this.forget(run.id);
    if (run.automatic && run.actorKey) {
      const key = `${run.workspaceId}\u0000${run.actorKey}`;
      if (this.automatic.get(key)?.id === run.id) this.automatic.delete(key);
    }
    if (!ended) return (await findRun(this.services.db, run.id)) ?? run;
    const principal = by ?? (await findPrincipals(this.services.db, [run.principalId])).get(run.principalId) ?? null;
    await this.announce('run.ended', ended, principal);
    return ended;
  }

  private forget(id: string) {
    this.openSeen.delete(id);
    this.namedSeen.delete(id);
  }

  /** Ends the automatic runs idle for 15 minutes (their end is 15 minutes after their last write). */
  private async endIdleRuns(): Promise<number> {
    const idle = await listIdleAutomaticRuns(this.services.db, new Date(this.services.clock.now().getTime() - AUTOMATIC_RUN_IDLE_MS), 500);
    for (const run of idle) await this.end(run, idleEnd(run));
    return idle.length;
  }

  /** Runs the idle pass now (tests with a clock they move). */
  endIdleNow(): Promise<number> {
    return this.idleRuns.runOnce();
  }

  async announce(event: EventName, run: RunRow, principal: Principal | null, data: Record<string, unknown> = {}): Promise<void> {
    const context = await findWorkspaceEventContext(this.services.db, run.workspaceId);
    if (!context) return;
    const draft: EventDraft = {
      event,
      orgId: context.orgId,
      workspace: { id: context.id, slug: context.slug, org: { slug: context.orgSlug } },
      principal,
      subjectId: run.id,
      data: { runId: run.id, name: run.name, automatic: run.automatic, ...(run.reverts ? { reverts: run.reverts } : {}), ...data },
    };
    await emitEvents(this.services, [draft]);
  }
}

export function statusOf(run: RunRow, now: Date): 'open' | 'ended' {
  if (run.endedAt) return 'ended';
  return run.automatic && lastActive(run) + AUTOMATIC_RUN_IDLE_MS <= now.getTime() ? 'ended' : 'open';
}

function lastActive(run: RunRow): number {
  return (run.lastWriteAt ?? run.startedAt).getTime();
}

export function idleEnd(run: RunRow): Date {
  return new Date(lastActive(run) + AUTOMATIC_RUN_IDLE_MS);
}

