// Moved to src/auth/actor.ts (callers are resolved below HTTP and sync); kept so existing imports keep working.
export type { Actor, OAuthCaller, Principal } from '../auth/actor';
export { actorKey } from '../auth/actor';
