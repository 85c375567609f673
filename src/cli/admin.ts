import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { ConfigError, loadConfig, type Config } from '../config';
import type { Actor } from '../policy/actor';
import { PLAN_NAMES } from '../limits/plans';
import type { KeyRole } from '../persistence/keys';
import type { PlanName } from '../persistence/schema';
import type { Services } from '../domain/services';

/**
 * Admin CLI for self-hosted installs: `npm run admin -- <command> [flags]`.
 * It opens the same database as `npm start` (DATA_DIR or DATABASE_URL) and
 * calls the same domain functions as the API.
 *
 * Exit codes: 0 done, 1 failed (e.g. unknown organisation), 2 usage error,
 * 78 invalid configuration (as `npm start`).
 *
 * The database, domain and sync modules are imported only when a command
 * runs, so help and usage errors answer without loading them.
 */

const EXIT_FAILED = 1;
const EXIT_USAGE = 2;
const EXIT_CONFIG = 78;

class UsageError extends Error {}
class CommandError extends Error {}

/** A flag; `check` returns a complaint about a given value, checked before anything is opened. */
type Flag = { type: 'string' | 'boolean'; required?: boolean; value?: string; help: string; check?: (value: string) => string | undefined };
type Values = Record<string, string | boolean | undefined>;
type Command = {
  summary: string;
  flags: Record<string, Flag>;
  run?(services: Services, values: Values): Promise<void>;
  /** Instead of `run`: the command opens what it needs itself (backup may not open the database at all; restore opens it unmigrated). */
  runAlone?(config: Config, values: Values): Promise<void>;
};

const KEY_ROLES: KeyRole[] = ['editor', 'commenter', 'viewer'];

const jsonFlag: Flag = { type: 'boolean', help: 'print the result as JSON' };
const email = (v: string) => (z.email().safeParse(v.toLowerCase()).success ? undefined : `"${v}" is not an e-mail address`);
const label = (v: string) => (v.length >= 1 && v.length <= 100 ? undefined : 'give 1 to 100 characters');
const oneOf = (allowed: readonly string[]) => (v: string) => (allowed.includes(v) ? undefined : `"${v}" is not one of ${allowed.join(', ')}`);

const commands: Record<string, Command> = {
  'create-user': {
    summary: 'Create a user with a personal organisation and its welcome workspace. An existing e-mail is left as it is.',
    flags: {
      email: { type: 'string', required: true, value: '<email>', help: "the user's e-mail address (they sign in with it)", check: email },
      org: { type: 'string', required: true, value: '<name>', help: 'organisation name; its slug is made from it (and made unique)', check: label },
      name: { type: 'string', value: '<name>', help: "display name (default: the e-mail's local part)", check: label },
      json: jsonFlag,
    },
    async run(services, values) {
      const { ensureAccount, normaliseEmail } = await import('../domain/accounts');
      const address = normaliseEmail(String(values.email));
      const options = { orgName: String(values.org), name: values.name === undefined ? undefined : String(values.name) };
      const account = await services.db.transaction().execute((tx) => ensureAccount(services, tx, address, options));
      if (values.json) return print(JSON.stringify({ email: address, ...account }));
      print(account.created ? `Created user ${address}` : `User ${address} already exists; nothing changed`);
      print(`user_id   ${account.userId}`);
      print(`org_slug  ${account.orgSlug}`);
      print(`welcome   ${services.config.publicUrl}/${account.orgSlug}/welcome`);
    },
  },

  'set-plan': {
    summary: "Change an organisation's plan.",
    flags: {
      org: { type: 'string', required: true, value: '<slug>', help: 'organisation slug (see list-orgs)' },
      plan: { type: 'string', required: true, value: PLAN_NAMES.join('|'), help: 'the new plan', check: oneOf(PLAN_NAMES) },
    },
    async run(services, values) {
      const { findOrgBySlug } = await import('../persistence/accounts');
      const { switchPlan } = await import('../domain/billing');
      const plan = values.plan as PlanName;
      const slug = String(values.org);
      const org = await findOrgBySlug(services.db, slug);
      if (!org) throw new CommandError(`No organisation with the slug "${slug}". Run list-orgs to see them.`);
      // Through the domain: the change is an event, and a pending downgrade is cancelled.
      await switchPlan(services, org.id, plan, { principal: null, reason: 'operator' });
      print(org.plan === plan ? `${org.slug} is already on ${plan}` : `${org.slug}: ${org.plan} -> ${plan}`);
    },
  },

  'list-orgs': {
    summary: 'List organisations with their plan and member count.',
    flags: { json: jsonFlag },
    async run(services, values) {
      const { listOrgs } = await import('../persistence/accounts');
      const orgs = (await listOrgs(services.db)).map((o) => ({ slug: o.slug, name: o.name, plan: o.plan, members: Number(o.members) }));
      if (values.json) return print(JSON.stringify(orgs));
      if (orgs.length === 0) return print('No organisations yet. Create one with create-user.');
      print(table(['slug', 'name', 'plan', 'members'], orgs.map((o) => [o.slug, o.name, o.plan, String(o.members)])));
    },
  },

  'mint-key': {
    summary: "Mint an API key for one of a user's agents (created on first use) in the user's organisation. The secret is shown once.",
    flags: {
      email: { type: 'string', required: true, value: '<email>', help: 'the user who owns the key and its agent', check: email },
      name: { type: 'string', required: true, value: '<keyName>', help: 'a label for the key', check: label },
      agent: { type: 'string', required: true, value: '<agentName>', help: "the agent's name (reused if the user already has one of that name)", check: label },
      role: { type: 'string', value: KEY_ROLES.join('|'), help: "the key's role, never above the user's own (default: editor)", check: oneOf(KEY_ROLES) },
      scope: { type: 'string', value: '<workspaceSlug>', help: 'limit the key to one workspace of the organisation (default: unscoped)' },
      json: jsonFlag,
    },
    async run(services, values) {
      const [{ normaliseEmail }, { mintKey }, { findUserByEmail }, { workspaceResolver }] = await Promise.all([
        import('../domain/accounts'),
        import('../domain/keys'),
        import('../persistence/accounts'),
        import('../access/workspace-access'),
      ]);
      const address = normaliseEmail(String(values.email));
      const user = await findUserByEmail(services.db, address);
      if (!user?.primaryOrgId) throw new CommandError(`No user with the e-mail ${address}. Create one with create-user.`);
      // The operator acts as the user, as a signed-in session would; elevation guards web sessions, this runs on the host.
      const actor: Actor = {
        principal: { principalType: 'user', id: user.id, name: user.name, avatarUrl: user.avatarUrl },
        via: 'session',
        userId: user.id,
        orgId: user.primaryOrgId,
      };
      const { key, secret } = await mintKey(services, workspaceResolver(services), actor, {
        name: String(values.name),
        agentName: String(values.agent),
        role: (values.role ?? 'editor') as KeyRole,
        scopeSlug: values.scope === undefined ? undefined : String(values.scope),
      });
      if (values.json) return print(JSON.stringify({ key, secret }));
      print(`Minted key "${key.name}" for agent ${key.agentName} (${key.role}, ${key.scopeSlug ? `workspace ${key.scopeSlug}` : 'unscoped'})`);
      print(`key_id    ${key.id}`);
      print(`agent_id  ${key.agentId}`);
      print(`secret    ${secret}`);
      print('The secret is not stored and cannot be shown again.');
    },
  },

  'compact-document': {
    summary:
      "Fold a document's update log into its snapshot, as far as its version history, held bases and underived updates allow, a bounded step at a time: for a document the server refuses to load as too large (its log line names it). Stop the server first when it uses the embedded database.",
    flags: {
      document: { type: 'string', required: true, value: '<name>', help: 'the sync document name, e.g. ws:<workspace>:doc:<surface>', check: (v) => (v.length >= 1 && v.length <= 300 ? undefined : 'give 1 to 300 characters') },
      json: jsonFlag,
    },
    async run(services, values) {
      const { compactFully } = await import('../sync/document-store');
      const { storedSize } = await import('../persistence/documents');
      const name = String(values.document);
      const before = await storedSize(services.db, name);
      if (before.tailUpdates === 0 && before.snapshotBytes === 0) throw new CommandError(`No stored document named "${name}".`);
      const result = await compactFully(services.db, name, () => services.clock.now(), (step) => {
        if (!values.json) process.stderr.write(`folded ${step.folded} updates, ${step.remaining} left\n`);
      });
      const after = await storedSize(services.db, name);
      if (values.json) return print(JSON.stringify({ document: name, before, after, blockedBy: result?.blockedBy ?? null }));
      print(`Compacted ${name}`);
      print(`log before  ${before.tailUpdates} updates, ${before.tailBytes} bytes; snapshot ${before.snapshotBytes} bytes`);
      print(`log after   ${after.tailUpdates} updates, ${after.tailBytes} bytes; snapshot ${after.snapshotBytes} bytes`);
      if (after.tailUpdates > 0 && result?.blockedBy) print(`not folded  ${after.tailUpdates} updates (held back by: ${result.blockedBy})`);
    },
  },

  backup: {
    summary:
      'Write a backup archive of the whole store: the database (one consistent snapshot), file blobs, the webhook key file, with a checked manifest. ' +
      'While a server runs on the embedded database, the server takes it (set ADMIN_TOKEN, the same as the server\'s).',
    flags: {
      out: { type: 'string', required: true, value: '<file>', help: 'where to write the archive (a .zip; written whole or not at all)' },
      server: { type: 'string', value: '<url>', help: "the running server's base URL, when the embedded database is in use (default: PUBLIC_URL)" },
      json: jsonFlag,
    },
    async runAlone(config, values) {
      const out = path.resolve(String(values.out));
      const { verifyArchive, createBackup } = await import('../domain/backup');
      let manifest;
      if (!config.databaseUrl && !values.force && embeddedDatabaseInUse(config)) {
        manifest = await backupThroughServer(config, values.server === undefined ? config.publicUrl : String(values.server), out, verifyArchive);
      } else {
        const [{ openDatabase }, { createBlobStore }] = await Promise.all([import('../persistence/database'), import('../files/open-blob-store')]);
        const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
        const blobs = await createBlobStore(config);
        try {
          manifest = await createBackup({ config, database, blobs }, out);
        } finally {
          blobs.close?.();
          await database.close();
        }
      }
      const rows = manifest.tables.reduce((sum, t) => sum + t.rows, 0);
      const size = fs.statSync(out).size;
      if (values.json) return print(JSON.stringify({ file: out, bytes: size, schemaVersion: manifest.schemaVersion, rows, tables: manifest.tables.length, blobs: manifest.blobs.length, missingBlobs: manifest.missingBlobs }));
      print(`Backed up to ${out} (${size} bytes)`);
      print(`schema    ${manifest.schemaVersion} (${manifest.source.database})`);
      print(`rows      ${rows} in ${manifest.tables.length} tables`);
      print(`blobs     ${manifest.blobs.length}${manifest.webhookSecretKey ? ', and the webhook key file' : ''}`);
      if (manifest.missingBlobs.length > 0) print(`missing   ${manifest.missingBlobs.length} blobs named by the database were gone (files purged meanwhile?)`);
    },
  },

  restore: {
    summary:
      'Restore a backup archive into an empty store (a fresh DATA_DIR, or an empty DATABASE_URL database). The whole archive is checked first; a damaged one changes nothing. Stop the server first.',
    flags: {
      from: { type: 'string', required: true, value: '<file>', help: 'the archive written by backup' },
      force: { type: 'boolean', help: 'restore into a store that is not empty, emptying it first (everything in it is lost)' },
      json: jsonFlag,
    },
    async runAlone(config, values) {
      // Here --force empties the store; it never overrides the running-server check.
      assertEmbeddedDatabaseFree(config, false);
      const [{ restoreBackup }, { openDatabase }, { createBlobStore }] = await Promise.all([
        import('../domain/backup'),
        import('../persistence/database'),
        import('../files/open-blob-store'),
      ]);
      const file = path.resolve(String(values.from));
      if (!fs.existsSync(file)) throw new CommandError(`No archive at ${file}.`);
      const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, migrate: false });
      const blobs = await createBlobStore(config);
      let result;
      try {
        result = await restoreBackup({ config, database, blobs }, file, { force: values.force === true });
      } finally {
        blobs.close?.();
        await database.close();
      }
      const { manifest } = result;
      if (values.json) return print(JSON.stringify({ file, createdAt: manifest.createdAt, schemaVersion: manifest.schemaVersion, rows: result.rows, blobs: result.blobs, emptied: result.emptied }));
      print(`Restored ${file}`);
      print(`taken     ${manifest.createdAt} on ${manifest.source.database}`);
      print(`rows      ${result.rows} in ${manifest.tables.length} tables${result.emptied ? ' (the store was emptied first)' : ''}`);
      print(`blobs     ${result.blobs}${manifest.webhookSecretKey ? ', and the webhook key file' : ''}`);
      if (config.webhookSecretKey && manifest.webhookSecretKey) print('note      WEBHOOK_SECRET_KEY is set here, so the restored key file is not used: webhook secrets sealed under it need the old key.');
    },
  },
};

/** Flags every command takes. */
const commonFlags: Record<string, Flag> = {
  force: {
    type: 'boolean',
    help: 'open the embedded database even if it looks in use (only after a crash: two processes on one PGlite directory corrupt it)',
  },
  help: { type: 'boolean', help: 'show this help' },
};

function print(line: string) {
  process.stdout.write(line + '\n');
}

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join('  ');
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

function flagUsage(name: string, flag: Flag): string {
  return `--${name}${flag.value ? ` ${flag.value}` : ''}`;
}

function commandHelp(name: string, command: Command): string {
  const flags = Object.entries(command.flags);
  const synopsis = flags.map(([n, f]) => (f.required ? flagUsage(n, f) : `[${flagUsage(n, f)}]`)).join(' ');
  const width = Math.max(0, ...flags.map(([n, f]) => flagUsage(n, f).length));
  const lines = [`  ${name} ${synopsis}`.trimEnd(), `      ${command.summary}`];
  for (const [n, f] of flags) lines.push(`      ${flagUsage(n, f).padEnd(width)}  ${f.required ? '(required) ' : ''}${f.help}`);
  return lines.join('\n');
}

function help(): string {
  return [
    'Trellis admin CLI',
    '',
    'Usage: npm run admin -- <command> [flags]',
    '',
    'Commands:',
    ...Object.entries(commands).map(([name, command]) => commandHelp(name, command) + '\n'),
    '  help',
    '      Show this help (also --help, or <command> --help).',
    '',
    'Every command also takes:',
    ...Object.entries(commonFlags).map(([n, f]) => `      ${flagUsage(n, f).padEnd(8)}  ${f.help}`),
    '',
    'The database is the one `npm start` uses: DATABASE_URL when set, else the',
    'embedded PGlite under DATA_DIR (default ./data). Stop the server before',
    'running a command against the embedded database; backup alone asks the',
    'running server to take it (with ADMIN_TOKEN set here as on the server).',
    '',
    'Exit codes: 0 done, 1 failed, 2 usage error, 78 invalid configuration.',
  ].join('\n');
}

function parse(name: string, command: Command, args: string[]): Values {
  const all = { ...command.flags, ...commonFlags };
  let values: Values;
  try {
    ({ values } = parseArgs({
      args,
      options: Object.fromEntries(Object.entries(all).map(([n, f]) => [n, { type: f.type }])),
      strict: true,
      allowPositionals: false,
    }) as { values: Values });
  } catch (error) {
    throw new UsageError(`${name}: ${(error as Error).message}`);
  }
  if (values.help) return values;
  for (const [n, value] of Object.entries(values)) if (typeof value === 'string') values[n] = value.trim();
  const missing = Object.entries(command.flags).filter(([n, f]) => f.required && (values[n] === undefined || values[n] === ''));
  if (missing.length > 0) {
    throw new UsageError(`${name}: missing ${missing.map(([n, f]) => flagUsage(n, f)).join(', ')}`);
  }
  for (const [n, f] of Object.entries(command.flags)) {
    const value = values[n];
    const problem = typeof value === 'string' ? f.check?.(value) : undefined;
    if (problem) throw new UsageError(`${name}: --${n}: ${problem}.`);
  }
  return values;
}

/**
 * PGlite is a single-process database: a second process opening the same
 * directory as a running server would corrupt it. A live PGlite leaves
 * `postmaster.pid` in its directory (a crashed one too, until the next open).
 */
function embeddedDatabaseInUse(config: Config): boolean {
  return fs.existsSync(path.join(config.dataDir, 'pglite', 'postmaster.pid'));
}

function assertEmbeddedDatabaseFree(config: Config, force: boolean) {
  if (config.databaseUrl || force) return;
  const pidFile = path.join(config.dataDir, 'pglite', 'postmaster.pid');
  if (embeddedDatabaseInUse(config)) {
    throw new CommandError(
      `The embedded database in ${config.dataDir} is in use (${pidFile} exists). Stop the Trellis server first; ` +
        'if no server is running (it crashed), run the command again with --force.',
    );
  }
}

/**
 * The running server writes the backup (PGlite cannot be opened by a second
 * process) and streams it here; the archive is checked whole before it takes
 * its name, so a cut connection leaves nothing that looks like a backup.
 */
async function backupThroughServer(
  config: Config,
  server: string,
  out: string,
  verify: (file: string) => Promise<{ zip: { close(): void }; manifest: import('../domain/backup').BackupManifest }>,
) {
  if (!config.adminToken) {
    throw new CommandError(
      `The embedded database in ${config.dataDir} is in use by a running server. Set ADMIN_TOKEN (the same as the server's) so the server takes the backup, or stop the server.`,
    );
  }
  const url = `${server.replace(/\/+$/, '')}/api/admin/backup`;
  let response: Response;
  try {
    response = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${config.adminToken}` } });
  } catch (error) {
    throw new CommandError(`Could not reach the server at ${url} (${(error as Error).message}). Pass --server <url> if it listens elsewhere than PUBLIC_URL.`);
  }
  if (response.status !== 200 || !response.body) {
    const text = await response.text().catch(() => '');
    let message = text;
    try {
      message = (JSON.parse(text) as { error?: { message?: string } }).error?.message ?? text;
    } catch {}
    throw new CommandError(`The server refused the backup (${response.status}): ${message}`);
  }
  const partial = `${out}.partial`;
  try {
    const { Readable } = await import('node:stream');
    const { pipeline } = await import('node:stream/promises');
    await pipeline(Readable.fromWeb(response.body as never), fs.createWriteStream(partial));
    const { zip, manifest } = await verify(partial);
    zip.close();
    fs.renameSync(partial, out);
    return manifest;
  } finally {
    fs.rmSync(partial, { force: true });
  }
}

async function runAdmin(argv: string[]): Promise<number> {
  const [name, ...args] = argv;
  if (name === undefined) {
    process.stderr.write(help() + '\n');
    return EXIT_USAGE;
  }
  if (name === 'help' || name === '--help' || name === '-h') {
    print(help());
    return 0;
  }
  const command = Object.hasOwn(commands, name) ? commands[name] : undefined;
  try {
    if (!command) throw new UsageError(`Unknown command "${name}". Commands: ${Object.keys(commands).join(', ')}.`);
    const values = parse(name, command, args);
    if (values.help) {
      print(`Usage: npm run admin -- ${name} [flags]\n\n${commandHelp(name, command)}`);
      return 0;
    }
    const config = loadConfig();
    if (command.runAlone) {
      await command.runAlone(config, values);
      return 0;
    }
    assertEmbeddedDatabaseFree(config, values.force === true);
    const [{ createServices, createLogger }, { default: pino }] = await Promise.all([import('../bootstrap'), import('pino')]);
    const { services, close } = await createServices(config, { log: createLogger('warn', pino.destination({ dest: 2, sync: true })) });
    try {
      await command.run!(services, values);
    } finally {
      await close();
    }
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`${error.message}\nRun \`npm run admin -- --help\` for usage.\n`);
      return EXIT_USAGE;
    }
    if (error instanceof ConfigError) {
      process.stderr.write(error.message + '\n');
      return EXIT_CONFIG;
    }
    process.stderr.write(`${name}: ${error instanceof Error ? error.message : String(error)}\n`);
    return EXIT_FAILED;
  }
}

process.exitCode = await runAdmin(process.argv.slice(2));
