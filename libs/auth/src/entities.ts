import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { workspaceFilter } from '#libs/db';

export const ROLES = ['owner', 'member'] as const;
export type Role = (typeof ROLES)[number];

export const User = defineEntity({
  name: 'User',
  tableName: 'app_user',
  properties: {
    id: p.string().primary().length(32),
    /** E.164, e.g. +4915112345678. */
    phone: p.string().length(20).unique(),
    name: p.string().length(200).nullable(),
    /** Bumped by sign-out: access tokens carrying an older epoch are refused. */
    sessionEpoch: p.integer(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});
export type User = InferEntity<typeof User>;

export const Membership = defineEntity({
  name: 'Membership',
  tableName: 'membership',
  filters: workspaceFilter(),
  uniques: [{ properties: ['userId', 'workspaceId'] }],
  properties: {
    id: p.string().primary().length(40),
    userId: p.string().length(32).index(),
    workspaceId: p.string().length(32).index(),
    role: p.string().length(8).$type<Role>(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});
export type Membership = InferEntity<typeof Membership>;

/** A sign-in code: stored as an HMAC, 5 minutes, 5 tries, single use. */
export const OtpCode = defineEntity({
  name: 'OtpCode',
  tableName: 'otp_code',
  properties: {
    id: p.string().primary().length(32),
    phone: p.string().length(20).index(),
    codeHash: p.string().length(64),
    attempts: p.integer(),
    expiresAt: p.datetime(),
    /** Set when used, burned (too many tries) or replaced by a newer code. */
    closedAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});
export type OtpCode = InferEntity<typeof OtpCode>;

/** Opaque refresh tokens, stored hashed; rotated on use; reuse of a rotated one revokes its family. */
export const RefreshToken = defineEntity({
  name: 'RefreshToken',
  tableName: 'refresh_token',
  properties: {
    id: p.string().primary().length(32),
    userId: p.string().length(32).index(),
    familyId: p.string().length(32).index(),
    tokenHash: p.string().length(64).unique(),
    expiresAt: p.datetime(),
    rotatedAt: p.datetime().nullable(),
    revokedAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});
export type RefreshToken = InferEntity<typeof RefreshToken>;

/** Development message outbox: what would have been sent (sign-in codes); read by `otp:last`. */
export const DevMessage = defineEntity({
  name: 'DevMessage',
  tableName: 'dev_message',
  properties: {
    id: p.string().primary().length(32),
    channel: p.string().length(10),
    recipient: p.string().length(40).index(),
    body: p.text(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});
export type DevMessage = InferEntity<typeof DevMessage>;
