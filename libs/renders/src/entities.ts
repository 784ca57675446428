import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { workspaceFilter } from '#libs/db';

export const RENDER_STATUSES = ['queued', 'fetching', 'rendering', 'saving', 'done', 'failed', 'cancelled'] as const;
export type RenderStatus = (typeof RENDER_STATUSES)[number];
export const TERMINAL_STATUSES: readonly RenderStatus[] = ['done', 'failed', 'cancelled'];
export const RENDER_KINDS = ['image', 'video'] as const;
export type RenderKind = (typeof RENDER_KINDS)[number];

export interface RenderErrorInfo {
  code: string;
  message: string;
  stage: string;
  errors?: Record<string, string[]>;
}

/**
 * A render (§2 Render, decisions.md "Render record"). `(workspaceId, idempotencyKey)` is unique: the
 * row is the idempotency claim, inserted in the same transaction as the credit hold (§1.4).
 */
export const Render = defineEntity({
  name: 'Render',
  tableName: 'render',
  uniques: [{ properties: ['workspaceId', 'idempotencyKey'] }],
  filters: workspaceFilter(),
  indexes: [
    { properties: ['workspaceId', 'createdAt'] },
    { properties: ['status', 'createdAt'] },
    { properties: ['expiresAt'] },
  ],
  properties: {
    id: p.string().primary().length(32),
    workspaceId: p.string().length(32),
    status: p.string().length(12).$type<RenderStatus>(),
    kind: p.string().length(8).$type<RenderKind>(),
    mode: p.string().length(8).$type<'live' | 'test'>(),
    /**
     * A dashboard form's preview (POST /organization/templates/{id}/preview): a test-mode still that is
     * not part of the workspace's history — left out of the renders list, no event (no webhook, no
     * callback, no stream), output and record kept an hour (decisions.md "Test mode (issue 28):
     * dashboard previews and the mode switch").
     */
    preview: p.boolean().default(false),
    templateId: p.string().length(64).nullable(),
    templateVersion: p.integer().nullable(),
    format: p.string().length(8),
    width: p.integer().nullable(),
    height: p.integer().nullable(),
    /** Seconds of media (video), null for stills. */
    duration: p.double().nullable(),
    fps: p.double().nullable(),
    scale: p.integer(),
    fileSizeBytes: p.bigint('number').nullable(),
    /** Milliseconds from acceptance to stored output. */
    renderTime: p.integer().nullable(),
    /** Credits held at acceptance, charged at done (0 in test mode). */
    credits: p.integer(),
    watermarked: p.boolean(),
    /** Storage keys; URLs are built from them when shown (PUBLIC_URL may change). */
    outputKey: p.text().nullable(),
    posterKey: p.text().nullable(),
    thumbnailKey: p.text().nullable(),
    expiresAt: p.datetime().nullable(),
    /** When the sweeper deleted the outputs. */
    purgedAt: p.datetime().nullable(),
    error: p.json<RenderErrorInfo>().nullable(),
    progress: p.double(),
    cancelRequested: p.boolean(),
    metadata: p.json<Record<string, unknown>>().nullable(),
    callback: p.text().nullable(),
    /** The normalised edit spec that was (or will be) rendered. */
    edit: p.json<Record<string, unknown>>(),
    idempotencyKey: p.string().length(255).nullable(),
    /** SHA-256 of the request that claimed the idempotency key. */
    requestHash: p.string().length(64).nullable(),
    attempts: p.integer(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
    startedAt: p.datetime().nullable(),
    completedAt: p.datetime().nullable(),
  },
});
export type Render = InferEntity<typeof Render>;
