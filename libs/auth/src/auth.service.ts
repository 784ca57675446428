import { randomInt } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { raw, UniqueConstraintViolationException, type EntityManager, type MikroORM } from '@mikro-orm/core';
import type { Redis } from 'ioredis';
import { ApiError, deriveKey, validationFailed, hmacHex, newId, randomToken, safeEqual, type AppConfig } from '#libs/core';
import { allWorkspaces, forWorkspace } from '#libs/db';
import type { RedisKeys } from '#libs/redis';
import { underWorkspaceLock, Workspace } from '#libs/workspaces';
import { BackgroundTasks } from './background.js';
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
  /**
   * Refused sign-in code tries per phone across its codes, per window from the first (issue 28):
   * beyond them sign-in (verify and send) answers 429 until the window ends.
   */
  wrongTriesPerPhone: { count: 20, windowSec: 86_400 },
  /** Sign-in codes being sent at once, and waiting (beyond: 503 NOT_READY for every number alike). */
  sends: { concurrency: 4, maxWaiting: 1000 },
  /** Requests a user's sessions make, per minute (instead of the workspace's API meter). */
  requestsPerUser: { count: 600, windowSec: 60 },
} as const;

/** A sign-in's state in Redis (RedisKeys.sessionFamily). */
const FAMILY_LIVE = 'live';
const FAMILY_REVOKED = 'revoked';

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

  private readonly sends = new BackgroundTasks({
    ...SESSION_LIMITS.sends,
    onError: (err) => this.logger.error(`A sign-in code could not be sent: ${(err as Error).message}`),
  });
  private readonly logger = new Logger('sign-in');

  constructor(
    private readonly orm: MikroORM,
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
    private readonly config: Pick<AppConfig, 'appSecret' | 'signIn' | 'rateLimitMultiplier'>,
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
   * Sends a 6-digit code when the number belongs to a user; answers the same either way, in the same
   * time: the request path does the same work for every number (its limits, then a queued task), the
   * user lookup, the code and the SMS run after the answer (`sends`). Rate-limited per phone and per
   * client address, and refused while the phone is locked by wrong tries (429 with Retry-After).
   */
  async sendOtp(rawPhone: string, clientAddress: string): Promise<{ sent: true; expiresInSec: number }> {
    this.refuseWhenOff();
    const phone = this.phone(rawPhone);
    await this.refuseLocked(phone);
    await this.limit(this.keys.otpSends('phone', phone), SESSION_LIMITS.sendPerPhone, 'Too many sign-in codes requested for this phone number');
    await this.limit(this.keys.otpSends('ip', clientAddress), SESSION_LIMITS.sendPerAddress, 'Too many sign-in codes requested for this address');
    if (this.sends.full) throw new ApiError('NOT_READY', 'Too many sign-in codes are waiting to be sent; try again in a minute', { headers: { 'retry-after': '60' } });
    this.sends.push(() => this.deliverCode(phone));
    return { sent: true, expiresInSec: SESSION_LIMITS.otpTtlSec };
  }

  /** Resolves once the sign-in codes asked for so far are sent (or after `timeoutMs`): shutdown, and tests. */
  sendsSettled(timeoutMs = 5000): Promise<void> {
    return this.sends.settled(timeoutMs);
  }

  /** The queued half of send-otp: a code for a known number (closing its previous one) and its SMS; nothing for an unknown one. */
  private async deliverCode(phone: string): Promise<void> {
    const em = this.orm.em.fork();
    const user = await em.findOne(User, { phone });
    if (!user) return;
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

  /**
   * Checks a code (5 tries, then burned; single use) and opens a session. Every refused try counts
   * toward the phone's wrong tries across codes (SESSION_LIMITS.wrongTriesPerPhone): beyond them, 429
   * until the window ends, the right code included, for known and unknown numbers alike.
   */
  async verifyOtp(rawPhone: string, code: string): Promise<{ user: User; tokens: SessionTokens }> {
    this.refuseWhenOff();
    const phone = normalisePhone(rawPhone);
    const refuse = (why: string) => new ApiError('INVALID_OTP', why);
    if (!phone) throw refuse('The sign-in code is not valid');
    const tries = this.keys.otpWrongTries(phone);
    // Counted before the check (so parallel tries cannot pass the limit), given back on success.
    await this.limit(tries, SESSION_LIMITS.wrongTriesPerPhone, 'Too many wrong sign-in codes for this phone number');
    const signedIn = await this.checkCode(phone, code, refuse);
    await this.redis.decr(tries);
    return signedIn;
  }

  private async checkCode(phone: string, code: string, refuse: (why: string) => ApiError): Promise<{ user: User; tokens: SessionTokens }> {
    if (!/^\d{6}$/.test(code)) throw refuse('The sign-in code is not valid');
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
    const tokens = await this.issue(user, newId('sessionFamily'));
    if (!tokens) throw refuse('The account was signed out meanwhile; request a new code');
    return { user, tokens };
  }

  /** Rotates a refresh token; reuse of a rotated one revokes its whole family, access tokens included. */
  async refresh(refreshToken: string): Promise<SessionTokens> {
    const em = this.orm.em.fork();
    const refuse = (why: string) => new ApiError('INVALID_REFRESH_TOKEN', why);
    const row = typeof refreshToken === 'string' ? await em.findOne(RefreshToken, { tokenHash: hmacHex(this.refreshKey, refreshToken) }) : null;
    if (!row || row.revokedAt || row.expiresAt <= new Date()) throw refuse('The refresh token is not valid; sign in again');
    const revokeFamily = async () => {
      await this.revokeFamily(row.userId, row.familyId);
      return refuse('The refresh token was already used; every session of this sign-in has been revoked');
    };
    if (row.rotatedAt) throw await revokeFamily();
    const claimed = await em.nativeUpdate(RefreshToken, { id: row.id, rotatedAt: null, revokedAt: null }, { rotatedAt: new Date() });
    if (claimed === 0) throw await revokeFamily();
    const user = await em.findOne(User, { id: row.userId });
    if (!user) throw refuse('The refresh token is not valid; sign in again');
    const tokens = await this.issue(user, row.familyId);
    if (!tokens) throw refuse('This sign-in was revoked meanwhile; sign in again');
    return tokens;
  }

  /**
   * Ends a sign-in: its refresh tokens, and its access tokens on their next request in every API process
   * (the family's state in Redis is what `authenticate` reads; the database stays the truth on a miss).
   */
  private async revokeFamily(userId: string, familyId: string): Promise<void> {
    await this.orm.em.fork().nativeUpdate(RefreshToken, { familyId, revokedAt: null }, { revokedAt: new Date() });
    await this.redis.set(this.keys.sessionFamily(userId, familyId), FAMILY_REVOKED, 'EX', SESSION_LIMITS.accessTtlSec);
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

  /**
   * Verifies an access token: 401 TOKEN_EXPIRED when expired, INVALID_TOKEN when forged, signed out
   * (the user's epoch moved on) or its sign-in revoked (its refresh-token family). Both states are
   * read from Redis in one round trip; on a miss, from the database, then kept for the access
   * tokens' lifetime (a revocation overwrites them at once).
   */
  async authenticate(token: string): Promise<string> {
    const { sub, sep, fam } = readAccessToken(this.jwtKey, token);
    const epochKey = this.keys.sessionEpoch(sub);
    const familyKey = this.keys.sessionFamily(sub, fam);
    let [epoch, family] = await this.redis.mget(epochKey, familyKey);
    epoch ??= await this.cache(epochKey, async () => {
      const user = await this.orm.em.fork().findOne(User, { id: sub }, { fields: ['sessionEpoch'] });
      return user && String(user.sessionEpoch);
    });
    if (String(sep) !== epoch) throw new ApiError('INVALID_TOKEN', 'The session was signed out; sign in again');
    family ??= await this.cache(familyKey, async () => ((await this.familyRevoked(this.orm.em.fork(), fam)) ? FAMILY_REVOKED : FAMILY_LIVE));
    if (family !== FAMILY_LIVE) throw new ApiError('INVALID_TOKEN', 'This sign-in was revoked (its refresh token was used twice); sign in again');
    return sub;
  }

  /** A session state read from the database, kept in Redis unless a revocation wrote a newer one meanwhile (NX). */
  private async cache(key: string, read: () => Promise<string | null>): Promise<string> {
    const value = await read();
    if (value === null) throw new ApiError('INVALID_TOKEN', 'The session token is not valid');
    await this.redis.set(key, value, 'EX', SESSION_LIMITS.accessTtlSec, 'NX');
    return (await this.redis.get(key)) ?? value;
  }

  /** A family is revoked once any of its refresh tokens is (reuse or sign-out revoke them all). */
  private async familyRevoked(em: EntityManager, familyId: string): Promise<boolean> {
    return (await em.count(RefreshToken, { familyId, revokedAt: { $ne: null } })) > 0;
  }

  /** Counts one request of the user's sessions: 429 RATE_LIMIT_EXCEEDED (with Retry-After) beyond SESSION_LIMITS.requestsPerUser. */
  countRequest(userId: string): Promise<void> {
    // RATE_LIMIT_MULTIPLIER (an operator's bigger machines; benchmarks) raises it as it raises the plans' rates.
    const rule = { ...SESSION_LIMITS.requestsPerUser, count: SESSION_LIMITS.requestsPerUser.count * this.config.rateLimitMultiplier };
    return this.limit(this.keys.sessionRequests(userId), rule, `More than ${rule.count} requests a minute from this account`);
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

  /**
   * An owner's invitation (dashboard, POST /organization/members): the number becomes a member with
   * `role` (a user is made for a number we do not know; they sign in with a code as usual). 422 on
   * `phone` when the number is already a member. Under the workspace's lock, as removals are.
   */
  async inviteMember(workspaceId: string, rawPhone: string, role: Role, name?: string): Promise<{ membership: Membership; user: User }> {
    const phone = this.phone(rawPhone);
    const invite = () => underWorkspaceLock(this.orm, workspaceId, async (em) => {
      let user = await em.findOne(User, { phone });
      if (user && (await em.findOne(Membership, { userId: user.id }))) throw validationFailed({ phone: ['is already a member of this workspace'] });
      user ??= em.create(User, { id: newId('user'), phone, name: name?.trim() || null, sessionEpoch: 0 });
      const membership = em.create(Membership, { id: newId('membership'), userId: user.id, workspaceId, role });
      await em.flush();
      return { membership, user };
    });
    try {
      return await invite();
    } catch (err) {
      // The same new number invited by two workspaces at once: one made the user; the other joins it.
      if (err instanceof UniqueConstraintViolationException) return invite();
      throw err;
    }
  }

  /**
   * An owner changes a member's role (dashboard, PATCH /organization/members/{userId}); it holds from
   * the member's next request (roles are read on every request). 404 for a user who is not a member;
   * 422 on `role` for the last owner made a member.
   */
  async changeRole(workspaceId: string, userId: string, role: Role): Promise<{ membership: Membership; user: User }> {
    return underWorkspaceLock(this.orm, workspaceId, async (em) => {
      const membership = await em.findOne(Membership, { userId });
      const user = await em.findOne(User, { id: userId });
      if (!membership || !user) throw new ApiError('NOT_FOUND', 'No member with this id in this workspace');
      if (membership.role === 'owner' && role !== 'owner' && (await em.count(Membership, { role: 'owner' })) <= 1) {
        throw validationFailed({ role: ['the last owner of this workspace stays an owner; make another member an owner first'] });
      }
      membership.role = role;
      await em.flush();
      return { membership, user };
    });
  }

  /**
   * Removes a member from a workspace (an owner's action; 404 NOT_FOUND for a user who is not one, 422
   * for the last owner). Their sessions lose the workspace on their next request: membership is read
   * on every request, never cached. Their sessions themselves stand (other workspaces).
   */
  async removeMember(workspaceId: string, userId: string): Promise<void> {
    // Owners removing each other at once: one after the other, so one owner always remains.
    await underWorkspaceLock(this.orm, workspaceId, async (em) => {
      const membership = await em.findOne(Membership, { userId });
      if (!membership) throw new ApiError('NOT_FOUND', 'No member with this id in this workspace');
      if (membership.role === 'owner' && (await em.count(Membership, { role: 'owner' })) <= 1) {
        throw validationFailed({ userId: ['is the last owner of this workspace; make another member an owner first'] });
      }
      await em.nativeDelete(Membership, { id: membership.id });
    });
  }

  /**
   * A new access token and refresh token of a family; null when the family was revoked meanwhile (a
   * sign-out or a reuse that ran while this refresh or sign-in was under way). The refresh token is
   * stored first, then the epoch and the family are read: a revocation that committed before the
   * read is seen here, one after it has either revoked the new row too or left the token an older epoch.
   */
  private async issue(user: User, familyId: string): Promise<SessionTokens | null> {
    const refreshToken = `rt_${randomToken(32)}`;
    const em = this.orm.em.fork();
    const row = em.create(RefreshToken, {
      id: newId('refreshToken'), userId: user.id, familyId, tokenHash: hmacHex(this.refreshKey, refreshToken),
      expiresAt: new Date(Date.now() + SESSION_LIMITS.refreshTtlSec * 1000), rotatedAt: null, revokedAt: null,
    });
    await em.flush();
    const current = await em.fork().findOne(User, { id: user.id }, { fields: ['sessionEpoch'] });
    if (!current || (await this.familyRevoked(em.fork(), familyId))) {
      await em.nativeUpdate(RefreshToken, { id: row.id }, { revokedAt: new Date() });
      return null;
    }
    const now = Math.floor(Date.now() / 1000);
    const token = signJwt(this.jwtKey, { sub: user.id, sep: current.sessionEpoch, fam: familyId, iat: now, exp: now + SESSION_LIMITS.accessTtlSec, jti: randomToken(9) });
    return { token, refreshToken };
  }

  private hashCode(phone: string, code: string): string {
    return hmacHex(this.otpKey, `${phone}:${code}`);
  }

  /** SIGN_IN=off: the deployment offers no sign-in by code (404, as for a route it does not have). */
  private refuseWhenOff(): void {
    if (!this.config.signIn) throw new ApiError('NOT_FOUND', 'Sign-in by phone code is turned off on this deployment (SIGN_IN=off)');
  }

  /** 429 while the phone's wrong tries are used up (SESSION_LIMITS.wrongTriesPerPhone). */
  private async refuseLocked(phone: string): Promise<void> {
    const key = this.keys.otpWrongTries(phone);
    const [[, n], [, ttl]] = (await this.redis.multi().get(key).ttl(key).exec()) as [[null, string | null], [null, number]];
    if (Number(n ?? 0) >= SESSION_LIMITS.wrongTriesPerPhone.count) {
      const retry = ttl > 0 ? ttl : SESSION_LIMITS.wrongTriesPerPhone.windowSec;
      throw new ApiError('RATE_LIMIT_EXCEEDED', `Too many wrong sign-in codes for this phone number; try again in ${retry} s`, { headers: { 'retry-after': String(retry) } });
    }
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
