import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { ApiError, errors, zodIssuesError } from '../errors';

export { zodIssuesError } from '../errors';

type ValidationIssue = { keyword: string; instancePath: string; message: string; params?: Record<string, unknown> };

export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  const fastifyError = error as FastifyError & { validationContext?: string };
  if (hasZodFastifySchemaValidationErrors(fastifyError)) {
    // fastify-type-provider-zod hands zod's issues over in Ajv's shape; the rest of each issue is in `params`.
    const issues = (fastifyError.validation as unknown as ValidationIssue[]).map((issue) => ({
      ...issue.params,
      code: issue.keyword,
      path: issue.instancePath.split('/').filter(Boolean),
      message: issue.message,
    }));
    const context = fastifyError.validationContext;
    return zodIssuesError(issues, context && context !== 'body' ? [context] : []);
  }
  switch (fastifyError?.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return errors.invalidJson();
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
    case 'FST_REQ_FILE_TOO_LARGE':
    case 'FST_FILES_LIMIT':
      return errors.payloadTooLarge('The request body is too large.');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError(415, 'unsupported_media_type', 'Unsupported Content-Type for this route.');
    case 'FST_INVALID_MULTIPART_CONTENT_TYPE':
      return errors.badRequest('Expected a multipart/form-data body.');
  }
  if (fastifyError instanceof SyntaxError) return errors.invalidJson();
  const status = fastifyError?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return new ApiError(status, status === 404 ? 'not_found' : 'bad_request', fastifyError.message);
  }
  return errors.internal();
}

export function handleError(error: unknown, request: FastifyRequest, reply: FastifyReply) {
  const apiError = toApiError(error);
  if (apiError.statusCode >= 500 && !(error as { logged?: boolean }).logged) {
    // The stack goes to the log, never to the client.
    request.log.error({ err: error }, 'request failed');
  }
  if (apiError.headers) reply.headers(apiError.headers);
  return reply.status(apiError.statusCode).send({ ...apiError.body(), requestId: request.id });
}

export function handleNotFound(request: FastifyRequest, reply: FastifyReply) {
  return handleError(errors.notFound(`Route ${request.method} ${request.url.split('?')[0]}`), request, reply);
}
