import { randomInt } from 'node:crypto';
import { raw, type MikroORM } from '@mikro-orm/core';
import type { Redis } from 'ioredis';
import { ApiError, deriveKey, validationFailed, hmacHex, newId, randomToken, safeEqual, type AppConfig } from '#libs/core';
import { allWorkspaces, forWorkspace } from '#libs/db';
import type { RedisKeys } from '#libs/redis';
import { Workspace } from '#libs/workspaces';
import { Membership, OtpCode, RefreshToken, User, type Role } from './entities.js';
import { readAccessToken, signJwt } from './jwt.js';
import { normalisePhone } from './phone.js';
import type { SmsSender } from './sms.js';

export const SESSION_LIMITS = {
  accessTtlSec: 12 * 3600,
  refreshTtlSec: 60 * 86_400,
  otpTtlSec: 300,
  otpMaxAttempts: 5,
  /** Sign-in codes sent per phone and per client address, per window. */
  sendPerPhone: { count: 5, windowSec: 900 },
  sendPerAddress: { count: 20, windowSec: 3600 },
  /** Requests a user's sessions make, per minute (instead of the workspace's API meter). */
  requestsPerUser: { count: 600, windowSec: 60 },
} as const;

export interface SessionTokens {
  token: string;
  refreshToken: string;
}

export interface SessionMember {
  userId: string;
  role: Role;
  workspace: Workspace;
}

/** Phone sign-in (one-time codes), access and refresh tokens, sign-out, memberships (§5 "Session tokens"). */
export class AuthService {
  private readonly jwtKey: Buffer;
  private readonly otpKey: Buffer;
  private readonly refreshKey: Buffer;

  constructor(
    private readonly orm: MikroORM,
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
    config: Pick<AppConfig, 'appSecret'>,
    private readonly sms: SmsSender,
  ) {
    this.jwtKey = deriveKey(config.appSecret, 'session-jwt');
    this.otpKey = deriveKey(config.appSecret, 'otp');
    this.refreshKey = deriveKey(config.appSecret, 'refresh-token');
  }

  phone(raw: string): string {
    const phone = normalisePhone(raw);
    if (!phone) throw validationFailed({ phone: ['must be in international form, e.g. +4915112345678'] });
    return phone;
  }

  /**
   * Sends a 6-digit code when the number belongs to a user; answers the same either way.
   * Rate-limited per phone and per client address (429 with Retry-After).
   */
  async sendOtp(rawPhone: string, clientAddress: string): Promise<{ sent: true; expiresInSec: number }> {
    const phone = this.phone(rawPhone);
    await this.limit(this.keys.otpSends('phone', phone), SESSION_LIMITS.sendPerPhone, 'Too many sign-in codes requested for this phone number');
    await this.limit(this.keys.otpSends('ip', clientAddress), SESSION_LIMITS.sendPerAddress, 'Too many sign-in codes requested for this address');
    const em = this.orm.em.fork();
    const user = await em.findOne(User, { phone });
    if (user) {
      const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
      await em.transactional(async (tx) => {
        await tx.nativeUpdate(OtpCode, { phone, closedAt: null }, { closedAt: new Date() });
        tx.create(OtpCode, {
          id: newId('otp'), phone, codeHash: this.hashCode(phone, code), attempts: 0,
          expiresAt: new Date(Date.now() + SESSION_LIMITS.otpTtlSec * 1000), closedAt: null,
        });
      });
      await this.sms.send(phone, `Your sign-in code is ${code}. It expires in 5 minutes.`);
    }
    return { sent: true, expiresInSec: SESSION_LIMITS.otpTtlSec };
  }

  /** Checks a code (5 tries, then burned; single use) and opens a session. */
  async verifyOtp(rawPhone: string, code: string): Promise<{ user: User; tokens: SessionTokens }> {
    const phone = normalisePhone(rawPhone);
    const refuse = (why: string) => new ApiError('INVALID_OTP', why);
    if (!phone || !/^\d{6}$/.test(code)) throw refuse('The sign-in code is not valid');
    const em = this.orm.em.fork();
    const otp = await em.findOne(OtpCode, { phone, closedAt: null }, { orderBy: { createdAt: 'desc' } });
    if (!otp || otp.expiresAt <= new Date()) throw refuse('The sign-in code is not valid or has expired; request a new one');
    const counted = await em.nativeUpdate(
      OtpCode,
      { id: otp.id, closedAt: null, attempts: { $lt: SESSION_LIMITS.otpMaxAttempts } },
      { attempts: raw('attempts + 1') },
    );
    if (counted === 0) throw refuse('Too many wrong tries; request a new code');
    if (!safeEqual(this.hashCode(phone, code), otp.codeHash)) {
      if (otp.attempts + 1 >= SESSION_LIMITS.otpMaxAttempts) await em.nativeUpdate(OtpCode, { id: otp.id }, { closedAt: new Date() });
      throw refuse('The sign-in code is not valid');
    }
    const used = await em.nativeUpdate(OtpCode, { id: otp.id, closedAt: null }, { closedAt: new Date() });
    if (used === 0) throw refuse('The sign-in code was already used; request a new one');
    const user = await em.findOne(User, { phone });
    if (!user) throw refuse('The sign-in code is not valid');
    return { user, tokens: await this.issue(user, newId('sessionFamily')) };
  }

  /** Rotates a refresh token; reuse of a rotated one revokes its whole family. */
  async refresh(refreshToken: string): Promise<SessionTokens> {
    const em = this.orm.em.fork();
    const refuse = (why: string) => new ApiError('INVALID_REFRESH_TOKEN', why);
    const row = typeof refreshToken === 'string' ? await em.findOne(RefreshToken, { tokenHash: hmacHex(this.refreshKey, refreshToken) }) : null;
    if (!row || row.revokedAt || row.expiresAt <= new Date()) throw refuse('The refresh token is not valid; sign in again');
    const revokeFamily = async () => {
      await em.nativeUpdate(RefreshToken, { familyId: row.familyId, revokedAt: null }, { revokedAt: new Date() });
      return refuse('The refresh token was already used; every session of this sign-in has been revoked');
    };
    if (row.rotatedAt) throw await revokeFamily();
    const claimed = await em.nativeUpdate(RefreshToken, { id: row.id, rotatedAt: null, revokedAt: null }, { rotatedAt: new Date() });
    if (claimed === 0) throw await revokeFamily();
    const user = await em.findOne(User, { id: row.userId });
    if (!user) throw refuse('The refresh token is not valid; sign in again');
    return this.issue(user, row.familyId);
  }

  /** Revokes every token of the account on every device: effective on the next request. */
  async signOut(userId: string): Promise<void> {
    const em = this.orm.em.fork();
    await em.transactional(async (tx) => {
      await tx.nativeUpdate(User, { id: userId }, { sessionEpoch: raw('session_epoch + 1') });
      await tx.nativeUpdate(RefreshToken, { userId, revokedAt: null }, { revokedAt: new Date() });
    });
    const user = await em.findOneOrFail(User, { id: userId }, { refresh: true });
    await this.redis.set(this.keys.sessionEpoch(userId), String(user.sessionEpoch), 'EX', SESSION_LIMITS.accessTtlSec);
  }

  /** Verifies an access token: 401 TOKEN_EXPIRED when expired, INVALID_TOKEN when forged or signed out. */
  async authenticate(token: string): Promise<string> {
    const { sub, sep } = readAccessToken(this.jwtKey, token);
    const key = this.keys.sessionEpoch(sub);
    let epoch = await this.redis.get(key);
    if (epoch === null) {
      const user = await this.orm.em.fork().findOne(User, { id: sub }, { fields: ['sessionEpoch'] });
      if (!user) throw new ApiError('INVALID_TOKEN', 'The session token is not valid');
      epoch = String(user.sessionEpoch);
      // NX: never overwrite a newer epoch written by a concurrent sign-out.
      await this.redis.set(key, epoch, 'EX', SESSION_LIMITS.accessTtlSec, 'NX');
      epoch = (await this.redis.get(key)) ?? epoch;
    }
    if (String(sep) !== epoch) throw new ApiError('INVALID_TOKEN', 'The session was signed out; sign in again');
    return sub;
  }

  /** Counts one request of the user's sessions: 429 RATE_LIMIT_EXCEEDED (with Retry-After) beyond SESSION_LIMITS.requestsPerUser. */
  countRequest(userId: string): Promise<void> {
    return this.limit(this.keys.sessionRequests(userId), SESSION_LIMITS.requestsPerUser, `More than ${SESSION_LIMITS.requestsPerUser.count} requests a minute from this account`);
  }

  /** The caller's membership of a workspace; 403 NOT_A_MEMBER otherwise (also for unknown workspaces). */
  async member(userId: string, workspaceId: string): Promise<SessionMember> {
    const em = forWorkspace(this.orm, workspaceId);
    const membership = await em.findOne(Membership, { userId });
    const workspace = membership && (await em.findOne(Workspace, { id: workspaceId }));
    if (!membership || !workspace) throw new ApiError('NOT_A_MEMBER', 'You are not a member of this workspace');
    return { userId, role: membership.role, workspace };
  }

  /** The workspace a fresh sign-in lands in: the oldest membership, owners first. */
  async defaultMembership(userId: string): Promise<SessionMember> {
    const all = await this.membershipsOf(userId);
    const pick = all.find((m) => m.role === 'owner') ?? all[0];
    if (!pick) throw new ApiError('NOT_A_MEMBER', 'This account belongs to no workspace');
    return this.member(userId, pick.workspaceId);
  }

  /** Every workspace of the user with the role held there, oldest membership first (the dashboard's switcher). */
  async memberships(userId: string): Promise<SessionMember[]> {
    const all = await this.membershipsOf(userId);
    const workspaces = new Map((await this.orm.em.fork().find(Workspace, { id: { $in: all.map((m) => m.workspaceId) } })).map((w) => [w.id, w]));
    return all.flatMap((m) => {
      const workspace = workspaces.get(m.workspaceId);
      return workspace ? [{ userId, role: m.role, workspace }] : [];
    });
  }

  private membershipsOf(userId: string): Promise<Membership[]> {
    // A user's memberships span workspaces: read across them, for this user only.
    return allWorkspaces(this.orm).find(Membership, { userId }, { orderBy: { createdAt: 'asc', id: 'asc' } });
  }

  async members(workspaceId: string): Promise<{ membership: Membership; user: User }[]> {
    const em = forWorkspace(this.orm, workspaceId);
    const memberships = await em.find(Membership, {}, { orderBy: { createdAt: 'asc', id: 'asc' } });
    const users = await em.find(User, { id: { $in: memberships.map((m) => m.userId) } });
    const byId = new Map(users.map((u) => [u.id, u]));
    return memberships.flatMap((m) => (byId.has(m.userId) ? [{ membership: m, user: byId.get(m.userId) as User }] : []));
  }

  /** Adds a user (or an existing one) to a workspace with a role (CLI `user:create`). */
  async addUser(rawPhone: string, workspaceId: string, role: Role, name?: string): Promise<User> {
    const phone = this.phone(rawPhone);
    const em = forWorkspace(this.orm, workspaceId);
    if (!(await em.findOne(Workspace, { id: workspaceId }))) throw new ApiError('NOT_FOUND', `Workspace ${workspaceId} does not exist`);
    let user = await em.findOne(User, { phone });
    if (!user) user = em.create(User, { id: newId('user'), phone, name: name ?? null, sessionEpoch: 0 });
    const existing = await em.findOne(Membership, { userId: user.id });
    if (existing) existing.role = role;
    else em.create(Membership, { id: newId('membership'), userId: user.id, workspaceId, role });
    await em.flush();
    return user;
  }

  private async issue(user: User, familyId: string): Promise<SessionTokens> {
    const now = Math.floor(Date.now() / 1000);
    const token = signJwt(this.jwtKey, { sub: user.id, sep: user.sessionEpoch, iat: now, exp: now + SESSION_LIMITS.accessTtlSec, jti: randomToken(9) });
    const refreshToken = `rt_${randomToken(32)}`;
    const em = this.orm.em.fork();
    em.create(RefreshToken, {
      id: newId('refreshToken'), userId: user.id, familyId, tokenHash: hmacHex(this.refreshKey, refreshToken),
      expiresAt: new Date(Date.now() + SESSION_LIMITS.refreshTtlSec * 1000), rotatedAt: null, revokedAt: null,
    });
    await em.flush();
    return { token, refreshToken };
  }

  private hashCode(phone: string, code: string): string {
    return hmacHex(this.otpKey, `${phone}:${code}`);
  }

  private async limit(key: string, rule: { count: number; windowSec: number }, refusal: string): Promise<void> {
    const [[, n], [, ttl]] = (await this.redis.multi().incr(key).ttl(key).exec()) as [[null, number], [null, number]];
    if (ttl < 0) await this.redis.expire(key, rule.windowSec);
    if (n > rule.count) {
      const retry = ttl > 0 ? ttl : rule.windowSec;
      throw new ApiError('RATE_LIMIT_EXCEEDED', `${refusal}; try again in ${retry} s`, { headers: { 'retry-after': String(retry) } });
    }
  }
}
