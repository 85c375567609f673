import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { describeForm, formHasRoom, FORM_UPLOADS, openForm, submitForm, type FormAnswer, type OpenForm } from '../domain/forms';
import { ApiError, errors, type ErrorDetail } from '../errors';
import { htmlResponse, PAGE_HEADERS, sendPage, sendPageError } from '../http/html-page';
import { toApiError } from '../http/error-handler';
import { readMultipartForm, registerMultipart } from '../http/multipart';
import type { App } from '../http/types';
import { MINUTE, type RateLimitRule } from '../limits/rules';
import { storableJson } from '../lib/text';
import { ErrorBody } from '../model/schemas/common';
import type { Services } from '../domain/services';
import { formPage, fullPage, noticePage, sentPage } from './form-page';

/**
 * Public forms (docs/TABLES.md "Forms"): the page at `/forms/{token}`, which
 * posts back to itself, and `/api/forms/{token}` for front ends of one's own
 * (the form as JSON, and the same submission answering JSON). No account:
 * the token is the credential, and opens this form only. Not operations:
 * a page, and bodies that may be form posts with files. Submissions are
 * limited per address and form; a form post's body is at most 64 KB, with
 * files at most 25 MB in all.
 */

const TokenParams = z.object({ token: z.string().min(1).max(200).describe('The token of the form’s public link') });
const PageQuery = z.strictObject({ sent: z.literal('1').optional().describe('`1`: the page after sending, with the form’s message') });

/** A JSON or form-encoded answer (no files): bounded well below any file upload. */
const ANSWER_BODY_BYTES = 64 * 1024;
/** Every part of a multipart answer together. */
const MULTIPART_BODY_BYTES = 25 * 1024 * 1024;

const FORM_PAGE_HEADERS = { ...PAGE_HEADERS, 'x-robots-tag': 'noindex, nofollow' };

const FormDescription = z
  .object({
    title: z.string(),
    description: z.string(),
    submitLabel: z.string(),
    successMessage: z.string(),
    acceptingAnswers: z.boolean().describe('False when the workspace is at its plan’s row cap: a submission would be 402 `form_full`'),
    fields: z.array(
      z.object({
        key: z.string().describe('The name to send the answer under'),
        label: z.string(),
        help: z.string().nullable(),
        required: z.boolean(),
        type: z.string().describe('The column type: text, longtext, number, status, select, date, url, checkbox or attachment'),
        options: z.array(z.object({ value: z.string(), label: z.string() })).optional().describe('status and select: the values it takes'),
        multiple: z.boolean().optional().describe('select: several values may be sent'),
      }),
    ),
  })
  .meta({ id: 'PublicForm' });

const SUBMIT_DESCRIPTION =
  'Anyone with the link. The body is a flat object of field key → value as JSON, or the same fields form-encoded or as multipart/form-data (the only way to send files, as parts named after an attachment field; at most ' +
  `${FORM_UPLOADS.files} files of ${FORM_UPLOADS.fileBytes / 1024 / 1024} MB each). Empty optional fields are blank; a select field takes several values (a JSON array, or the field repeated). ` +
  'The row is created on the form’s sheet with its creator the form (a principal of type `form`, the view’s id), and the usual `row.created` event, webhooks and agent wake-ups. ' +
  '400 `bad_request` naming a field that is not on the form; 422 `validation` naming each required field left empty and each value that does not fit its column; 402 `form_full` at the plan’s row cap; ' +
  '404 `form_not_found` for a closed, deleted or unknown form; 413 past the body or file limits or the storage quota; 429 past `FORM_SUBMISSIONS_PER_MINUTE` (10 by default) per address and form, with `Retry-After`. ' +
  'A submission whose hidden honeypot field `_website` is filled in is answered as accepted and dropped. docs/TABLES.md "Forms".';

export async function formRoutes(app: App, services: Services) {
  const perAddressAndForm: RateLimitRule = {
    endpoint: 'form_submissions',
    limit: services.config.formSubmissionsPerMinute,
    windowMs: MINUTE,
    bucket: (request) => `${request.ip}:${(request.params as { token?: string }).token ?? ''}`,
  };
  const submitConfig = { auth: 'none' as const, metered: false, rateLimits: [perAddressAndForm] };

  // The page and what it posts: every refusal, a 429 of the limits hook included, is a page for a browser.
  await app.register(async (scope: App) => {
    await acceptAnswerBodies(scope);
    scope.setErrorHandler((error, request, reply) => sendPageError(request, reply, error, notice, FORM_PAGE_HEADERS));
    scope.get(
      '/forms/:token',
      {
        schema: {
          summary: 'Public page of a form',
          description:
            'HTML that works without JavaScript: the form’s title, description and questions (each labelled, with its help), posting back to this address; with `sent=1`, the form’s message after sending. ' +
            'At the row cap it says the form can take no more answers. 404 for a closed, deleted or unknown form. docs/TABLES.md "Forms".',
          tags: ['forms'],
          params: TokenParams,
          querystring: PageQuery,
          response: { 200: htmlResponse('The form, or its message after sending'), 404: htmlResponse('The form is closed, deleted or unknown') },
        },
        config: { auth: 'none', metered: false },
      },
      async (request, reply) => {
        const open = await openForm(services, request.params.token);
        if (request.query.sent) return sendPage(reply, 200, sentPage(open), FORM_PAGE_HEADERS);
        return sendPage(reply, 200, (await formHasRoom(services, open)) ? formPage(open) : fullPage(open), FORM_PAGE_HEADERS);
      },
    );

    scope.post(
      '/forms/:token',
      {
        schema: {
          summary: 'Send the public page of a form',
          description: `What the page posts (form-encoded, or multipart when it asks for files). On success 303 to the page with \`sent=1\`; a problem answers the page again with the answers kept and each problem at its field (or the JSON error to a client that asks for it). ${SUBMIT_DESCRIPTION}`,
          tags: ['forms'],
          params: TokenParams,
          consumes: ['application/x-www-form-urlencoded', 'multipart/form-data'],
          response: {
            303: z.null().describe('Sent: to the page with `sent=1`'),
            400: htmlResponse('The form again, naming the field that is not on it'),
            402: htmlResponse('The form can take no more answers'),
            404: htmlResponse('The form is closed, deleted or unknown'),
            413: htmlResponse('Too large'),
            422: htmlResponse('The form again, with the answers kept and each problem at its field'),
            429: htmlResponse('Too many answers from this address: try again later'),
          },
        },
        bodyLimit: ANSWER_BODY_BYTES,
        config: submitConfig,
      },
      async (request, reply) => {
        let open: OpenForm | undefined;
        let answer: FormAnswer | undefined;
        try {
          open = await openForm(services, request.params.token);
          answer = await readAnswer(request);
          await submitForm(services, open, answer);
        } catch (error) {
          const refused = open;
          const values = answer?.values;
          return sendPageError(request, reply, error, (apiError) => (refused ? refusedPage(refused, apiError, values) : notice(apiError)), FORM_PAGE_HEADERS);
        }
        return reply.redirect(`${request.params.token}?sent=1`, 303);
      },
    );
  });

  await app.register(async (scope: App) => {
    await acceptAnswerBodies(scope);

    scope.get(
      '/api/forms/:token',
      {
        schema: {
          summary: 'A public form, as JSON',
          description: 'Anyone with the link: the form’s title, description, texts and fields (key, label, help, required, column type, options), for a front end of one’s own that posts to the same address. 404 `form_not_found` for a closed, deleted or unknown form.',
          tags: ['forms'],
          params: TokenParams,
          response: { 200: FormDescription, 404: ErrorBody },
        },
        config: { auth: 'none', metered: false },
      },
      async (request) => {
        const open = await openForm(services, request.params.token);
        return { ...describeForm(open), acceptingAnswers: await formHasRoom(services, open) };
      },
    );

    scope.post(
      '/api/forms/:token',
      {
        schema: {
          summary: 'Answer a public form',
          description: `Answers 201 \`{ ok: true }\`. ${SUBMIT_DESCRIPTION}`,
          tags: ['forms'],
          params: TokenParams,
          consumes: ['application/json', 'application/x-www-form-urlencoded', 'multipart/form-data'],
          response: { 201: z.object({ ok: z.literal(true) }), 400: ErrorBody, 402: ErrorBody, 404: ErrorBody, 422: ErrorBody },
        },
        bodyLimit: ANSWER_BODY_BYTES,
        config: submitConfig,
      },
      async (request, reply) => {
        const open = await openForm(services, request.params.token);
        await submitForm(services, open, await readAnswer(request));
        return reply.code(201).send({ ok: true as const });
      },
    );
  });
}

/** Form posts, with files or without, besides JSON. */
async function acceptAnswerBodies(scope: App) {
  await registerMultipart(scope, FORM_UPLOADS.fileBytes, { files: FORM_UPLOADS.files, fields: 200 });
  scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: ANSWER_BODY_BYTES }, (_request, body, done) => {
    const fields: Record<string, string | string[]> = {};
    for (const [name, value] of new URLSearchParams(body as string)) {
      const existing = fields[name];
      fields[name] = existing === undefined ? value : [...[existing].flat(), value];
    }
    done(null, storableJson(fields));
  });
}

/** The answer as sent: a JSON object, a form post, or a multipart one with files. */
async function readAnswer(request: FastifyRequest): Promise<FormAnswer> {
  if (request.isMultipart()) {
    const { fields, files } = await readMultipartForm(request, {
      maxFiles: FORM_UPLOADS.files,
      maxFileBytes: FORM_UPLOADS.fileBytes,
      maxBodyBytes: MULTIPART_BODY_BYTES,
      tooLarge: `A form takes at most ${FORM_UPLOADS.files} files of ${FORM_UPLOADS.fileBytes / 1024 / 1024} MB each, ${MULTIPART_BODY_BYTES / 1024 / 1024} MB in all.`,
    });
    return { values: storableJson(fields), files, encoding: 'form' };
  }
  const body = request.body ?? {};
  if (typeof body !== 'object' || Array.isArray(body)) {
    throw errors.badRequest('Expected an object of field key → value.', [{ path: [], code: 'invalid_type', message: 'expected an object' }]);
  }
  const json = (request.headers['content-type'] ?? '').includes('json');
  return { values: body as Record<string, unknown>, files: {}, encoding: json ? 'json' : 'form' };
}

function notice(error: ApiError): string {
  if (error.code === 'form_not_found') return noticePage('Form not found', error.message);
  if (error.statusCode === 429) return noticePage('Too many answers', `Too many answers were sent from your address. Try again in ${error.headers?.['retry-after'] ?? 60} seconds.`);
  return noticePage('The form could not be sent', error.message);
}

/** A refusal of a form the person can see: full, or the form again with what they typed and the problems at their fields. */
function refusedPage(open: OpenForm, error: ApiError, values: Record<string, unknown> | undefined): string {
  if (error.code === 'form_full') return fullPage(open);
  if (error.statusCode === 429) return notice(error);
  const problems = Array.isArray(error.details) ? (error.details as ErrorDetail[]) : [];
  return formPage(open, { values, problems, summary: problems.length ? undefined : toApiError(error).message });
}
