import type { Migration } from 'kysely';
import * as m0001 from './0001_platform';
import * as m0003 from './0003_members';
import * as m0005 from './0005_documents';
import * as m0006 from './0006_docs';
import * as m0007 from './0007_update_attribution';
import * as m0010 from './0010_comments';
import * as m0020 from './0020_webhooks';
import * as m0030 from './0030_files';
import * as m0040 from './0040_search';
import * as m0041 from './0041_billing';
import * as m0042 from './0042_support_referrals';
import * as m0050 from './0050_oauth';
import * as m0051 from './0051_mcp_confirmations';
import * as m0060 from './0060_document_log_heads';
import * as m0070 from './0070_versions';
import * as m0071 from './0071_version_checkpoints';
import * as m0072 from './0072_row_identity';
import * as m0073 from './0073_version_restores';
import * as m0080 from './0080_suggestions';
import * as m0081 from './0081_document_attribution';
import * as m0084 from './0084_surface_former_slugs';
import * as m0090 from './0090_sync_instances';
import * as m0091 from './0091_read_marks';
import * as m0100 from './0100_runs';
import * as m0120 from './0120_views_forms';
import * as m0130 from './0130_imports';
import * as m0140 from './0140_workspace_time_zone';
import * as m0150 from './0150_snapshot_sync_copy';
import * as m0160 from './0160_underived_updates';
import * as m0170 from './0170_payload_statistics';
import * as m0180 from './0180_log_runs';
import * as m0190 from './0190_doc_section_parts';

/**
 * Every migration, in order. Listed statically (not read from the disk) so the
 * same set runs under tsx, vitest and on PGlite and Postgres alike.
 */
export const migrations: Record<string, Migration> = {
  '0001_platform': m0001,
  '0003_members': m0003,
  '0005_documents': m0005,
  '0006_docs': m0006,
  '0007_update_attribution': m0007,
  '0010_comments': m0010,
  '0020_webhooks': m0020,
  '0030_files': m0030,
  '0040_search': m0040,
  '0041_billing': m0041,
  '0042_support_referrals': m0042,
  '0050_oauth': m0050,
  '0051_mcp_confirmations': m0051,
  '0060_document_log_heads': m0060,
  '0070_versions': m0070,
  '0071_version_checkpoints': m0071,
  '0072_row_identity': m0072,
  '0073_version_restores': m0073,
  '0080_suggestions': m0080,
  '0081_document_attribution': m0081,
  '0084_surface_former_slugs': m0084,
  '0090_sync_instances': m0090,
  '0091_read_marks': m0091,
  '0100_runs': m0100,
  '0120_views_forms': m0120,
  '0130_imports': m0130,
  '0140_workspace_time_zone': m0140,
  '0150_snapshot_sync_copy': m0150,
  '0160_underived_updates': m0160,
  '0170_payload_statistics': m0170,
  '0180_log_runs': m0180,
  '0190_doc_section_parts': m0190,
};
