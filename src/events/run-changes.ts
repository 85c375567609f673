import type { Tx } from '../persistence/database';
import { recordRunChanges, type RunChangeWrite } from '../persistence/runs';

/**
 * What runs changed (docs/RUNS.md), written in the transaction that marks
 * their updates derived, so a crash between the two derives them again and
 * records them once; each run's last write is now (an automatic run ends 15
 * minutes after it).
 */
export async function writeRunChanges(tx: Tx, writes: readonly RunChangeWrite[], at: Date): Promise<void> {
  await recordRunChanges(tx, writes, at);
}
