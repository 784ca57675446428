import type { ErrorCode, FieldErrors, PublishCheck } from './errors.js';

export interface Pagination {
  page: number;
  limit: number;
  total: number;
  totalPages: number;
}

export interface SuccessEnvelope<T> {
  success: true;
  message: string;
  data: T;
  pagination?: Pagination;
  nextPageToken?: string | null;
}

export interface ErrorEnvelope {
  success: false;
  code: ErrorCode;
  message: string;
  data: unknown;
  errors?: FieldErrors;
  checks?: PublishCheck[];
  requestId?: string;
}

export function ok<T>(data: T, message = 'OK'): SuccessEnvelope<T> {
  return { success: true, message, data };
}

export function paged<T>(data: T[], pagination: Pagination, message = 'OK'): SuccessEnvelope<T[]> {
  return { success: true, message, data, pagination };
}

export function cursorPage<T>(data: T[], nextPageToken: string | null, message = 'OK'): SuccessEnvelope<T[]> {
  return { success: true, message, data, nextPageToken };
}
