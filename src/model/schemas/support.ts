import { z } from 'zod';
import { IsoDateTime, Principal } from './common';

/** Support tickets (docs/SUPPORT.md), as the API answers them and the web app's Help form reads them. */

export const TICKET_KINDS = ['bug', 'question', 'feature', 'billing', 'other'] as const;
export type TicketKind = (typeof TICKET_KINDS)[number];

export const Ticket = z
  .object({
    id: z.string(),
    kind: z.string(),
    status: z.enum(['open', 'closed']),
    title: z.string(),
    body: z.string(),
    context: z.record(z.string(), z.unknown()).nullable(),
    attachmentUrls: z.array(z.string()),
    trackerNumber: z.number().int().nullable().describe('The mirrored issue, numbered per organisation; null if the tracker could not be reached'),
    trackerUrl: z.string().nullable(),
    createdBy: Principal.nullable(),
    createdAt: IsoDateTime,
    updatedAt: IsoDateTime,
  })
  .meta({ id: 'SupportTicket' });

export const Screenshot = z
  .object({ url: z.string().describe('For `attachmentUrls`'), contentType: z.string(), size: z.number().int(), width: z.number().int().optional(), height: z.number().int().optional() })
  .meta({ id: 'SupportScreenshot' });

export type Ticket = z.infer<typeof Ticket>;
