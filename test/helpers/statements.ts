import type { KyselyPlugin, QueryResult, RootOperationNode } from 'kysely';

/**
 * A Kysely plugin that hands every statement run through it, with its
 * result, to `seen`: tests count what a piece of the server wrote (rows a
 * statement inserted or deleted) through `db.withPlugin(...)`.
 */
export function statementRecorder(seen: (node: RootOperationNode, result: QueryResult<unknown>) => void): KyselyPlugin {
  const nodes = new Map<unknown, RootOperationNode>();
  return {
    transformQuery: (args) => {
      nodes.set(args.queryId, args.node);
      return args.node;
    },
    transformResult: async (args) => {
      const node = nodes.get(args.queryId);
      nodes.delete(args.queryId);
      if (node) seen(node, args.result);
      return args.result;
    },
  };
}
