// The one place where any thrown error becomes a response; nothing leaves as an unexplained 500.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors, isResponseSerializationError } from 'fastify-type-provider-zod';
import { isDatabaseUnavailable, isUnstorableText } from '../db/errors.ts';
import { ApiError, type ValidationDetail } from './api-error.ts';
import type { ErrorCode } from './error-catalog.ts';
import { httpErrors } from './error-codes.ts';
import { invalidRequest, unreadableRequest } from './errors.ts';

// Fastify's own client errors, named the way this API names errors.
const frameworkCodes: Record<string, { error: ErrorCode; message: string }> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: {
    error: httpErrors.unsupported_media_type,
    message: 'Send the body as application/json',
  },
  FST_ERR_CTP_BODY_TOO_LARGE: { error: httpErrors.payload_too_large, message: 'The request body is too large' },
  FST_ERR_CTP_INVALID_JSON_BODY: { error: httpErrors.invalid_request, message: 'The body is not valid JSON' },
  FST_ERR_CTP_EMPTY_JSON_BODY: {
    error: httpErrors.invalid_request,
    message: 'The body is empty but content-type is application/json',
  },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: {
    error: httpErrors.invalid_request,
    message: 'Content-Length does not match the body',
  },
  FST_ERR_BAD_URL: { error: httpErrors.invalid_request, message: 'The URL is not valid' },
  FST_ERR_INVALID_URL: { error: httpErrors.invalid_request, message: 'The URL is not valid' },
  FST_ERR_MAX_PARAM_LENGTH: { error: httpErrors.uri_too_long, message: 'A path parameter is too long' },
};

const internalError = (request: FastifyRequest) =>
  httpErrors.internal_error('Something went wrong on our side', { requestId: request.id });

function detailsFromValidation(error: FastifyError): ValidationDetail[] {
  const location = (error as { validationContext?: string }).validationContext;
  return (error.validation ?? []).map((issue) => {
    // The type provider flattens zod's path into instancePath; array positions come back as numbers.
    const path = issue.instancePath
      .split('/')
      .filter(Boolean)
      .map((part) => (/^(0|[1-9]\d*)$/.test(part) ? Number(part) : part));
    return { message: issue.message ?? 'Invalid value', path, ...(location ? { in: location } : {}) };
  });
}

export function errorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  if (error instanceof ApiError) {
    if (error.statusCode >= 500) request.log.warn({ err: error }, 'request failed');
    reply.headers(error.headers);
    return reply.status(error.statusCode).send(error.toBody());
  }
  if (hasZodFastifySchemaValidationErrors(error)) {
    return reply.status(400).send(invalidRequest(detailsFromValidation(error)).toBody());
  }
  if (isResponseSerializationError(error)) {
    request.log.error({ err: error, issues: error.cause.issues }, 'response did not match its schema');
    return reply.status(500).send(internalError(request).toBody());
  }
  const known = error.code ? frameworkCodes[error.code] : undefined;
  if (known?.error === httpErrors.invalid_request)
    return reply.status(400).send(unreadableRequest(known.message).toBody());
  if (known) return reply.status(known.error.statuses[0]!).send(known.error(known.message).toBody());
  if (error instanceof SyntaxError || error.statusCode === 400)
    return reply.status(400).send(unreadableRequest('The request could not be read').toBody());
  if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
    return reply
      .status(error.statusCode)
      .send(new ApiError(error.statusCode, httpErrors.invalid_request.code, error.message).toBody());
  }
  if (isUnstorableText(error))
    return reply
      .status(400)
      .send(unreadableRequest('Text cannot contain the NUL character (U+0000) or unpaired surrogates').toBody());
  if (isDatabaseUnavailable(error)) {
    request.log.warn({ err: error }, 'database unavailable');
    reply.header('retry-after', '5');
    return reply
      .status(503)
      .send(httpErrors.service_unavailable('The database is unavailable; try again shortly').toBody());
  }
  request.log.error({ err: error }, 'unhandled error');
  return reply.status(500).send(internalError(request).toBody());
}

export function notFoundHandler(request: FastifyRequest, reply: FastifyReply) {
  return reply.status(404).send(httpErrors.not_found(`No such route for ${request.method}`).toBody());
}
