import type { Executor } from './database';

export async function findWorkspaceById(db: Executor, id: string) {
  return db.selectFrom('workspaces').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function findLiveSurface(db: Executor, workspaceId: string, surfaceId: string) {
  return db
    .selectFrom('surfaces')
    .selectAll()
    .where('workspaceId', '=', workspaceId)
    .where('id', '=', surfaceId)
    .where('deletedAt', 'is', null)
    .executeTakeFirst();
}
