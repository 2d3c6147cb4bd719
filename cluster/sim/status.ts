// Errors as the API gives them: a Status object with the right code and reason.
import { STATUS_CODES, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';

export class ApiError extends Error {
  readonly code: number;
  readonly reason: string;
  readonly details: Record<string, unknown>;
  constructor(code: number, reason: string, message: string, details: Record<string, unknown> = {}) {
    super(message);
    this.code = code;
    this.reason = reason;
    this.details = details;
  }
}

export const notFound = (kind: string, name: string) =>
  new ApiError(404, 'NotFound', `${kind} "${name}" not found`, { name, kind });
export const badRequest = (message: string) => new ApiError(400, 'BadRequest', message);
export const invalid = (kind: string, name: string, message: string) =>
  new ApiError(422, 'Invalid', `${kind} "${name}" is invalid: ${message}`, { name, kind });
export const conflict = (kind: string, name: string, message: string) =>
  new ApiError(409, 'Conflict', `Operation cannot be fulfilled on ${kind} "${name}": ${message}`, { name, kind });

export function statusObject(code: number, reason: string, message: string, details: Record<string, unknown> = {}) {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: code < 400 ? 'Success' : 'Failure',
    message,
    reason,
    details,
    code,
  };
}

export function sendJson(res: ServerResponse, code: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(code, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

export function sendError(res: ServerResponse, error: ApiError): void {
  sendJson(res, error.code, statusObject(error.code, error.reason, error.message, error.details));
}

/** An upgrade (exec, port-forward) refused before the WebSocket handshake: the Status as the HTTP answer. */
export function refuseUpgrade(socket: Duplex, error: ApiError): void {
  const body = JSON.stringify(statusObject(error.code, error.reason, error.message, error.details));
  socket.end(
    `HTTP/1.1 ${error.code} ${STATUS_CODES[error.code] ?? 'Error'}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}
