import { ORM } from '#libs/app';
import { allWorkspaces } from '#libs/db';
import { OutboxEvent } from '#libs/events';
import { Render } from '#libs/renders';
import { Workspace } from '#libs/workspaces';
import { lastCode, startApi, type TestApi } from './harness.js';

// Contract §8 (plans); docs/decisions.md "Structure (issue 31): workspace plans": a plan code the product
// does not know (an operator's typo in the database) is the free plan on every path, never more and never a 500.

describe('plans: an unknown plan code is the free plan on every path', () => {
  let api: TestApi;
  let workspaceId: string;
  let liveKey: string;
  const phone = '+15550131001';

  const inject = (method: 'GET' | 'POST', url: string, headers: Record<string, string>, payload?: object) =>
    api.app.inject({ method, url: `/api${url}`, headers, payload });

  beforeAll(async () => {
    api = await startApi();
    const created = await api.cli('workspace:create', '--name', 'Typo', '--plan', 'pro');
    expect(created.code).toBe(0);
    ({ workspaceId, liveKey } = created.json as { workspaceId: string; liveKey: string });
    expect((await api.cli('user:create', '--phone', phone, '--workspace', workspaceId, '--role', 'owner')).code).toBe(0);
    // The typo, as an operator would make it: straight in the database (`workspace:plan` refuses unknown codes).
    await api.app.get(ORM).em.fork().nativeUpdate(Workspace, { id: workspaceId }, { plan: 'platinum' });
  });
  afterAll(() => api.close());

  it('§8: the key path takes free\'s ceilings: a still larger than 2048 px a side is 402 LIMIT_IMAGE_SIZE before anything is held', async () => {
    const current = await inject('GET', '/v1/keys/current', { 'x-api-key': liveKey });
    expect(current.json().data.workspace).toEqual({ id: workspaceId, plan: 'free' });
    const edit = {
      timeline: { tracks: [{ clips: [{ asset: { type: 'text', text: 'x' }, start: 0, length: 1 }] }] },
      output: { format: 'png', size: { width: 1500, height: 1000 } },
    };
    const big = await inject('POST', '/v1/render?scale=2', { 'x-api-key': liveKey }, { edit });
    expect([big.statusCode, big.json().code]).toEqual([402, 'LIMIT_IMAGE_SIZE']);
    expect(big.json().message).toContain('Free plan allows (2048 px a side)');
    const orm = api.app.get(ORM);
    expect(await allWorkspaces(orm).count(Render, { workspaceId })).toBe(0);
    expect(await allWorkspaces(orm).count(OutboxEvent, { workspaceId })).toBe(0);
  });

  it('§5: signing in to the workspace answers the free plan and its credits, as the workspace switcher lists it (not a 500)', async () => {
    expect((await inject('POST', '/auth/send-otp', {}, { phone })).statusCode).toBe(200);
    const verified = await inject('POST', '/auth/verify-otp', {}, { phone, otp: await lastCode(api, phone) });
    expect(verified.statusCode).toBe(200);
    const session = verified.json().data;
    expect(session.organization.id).toBe(workspaceId);
    expect(session.plan).toEqual({ code: 'free', name: 'Free' });
    const memberships = await inject('GET', '/auth/memberships', { authorization: `Bearer ${session.token}` });
    expect(memberships.json().data).toEqual([expect.objectContaining({ id: workspaceId, plan: { code: 'free', name: 'Free' } })]);
    const balance = await inject('GET', '/credits', { authorization: `Bearer ${session.token}`, 'x-service-org': workspaceId });
    expect(balance.json().data).toEqual(session.credits);
  });

  it('§5, §8: the workspace may hold free\'s 2 live keys, not pro\'s 20: the third is 402 LIMIT_APIKEYS (not a 500)', async () => {
    const second = await api.cli('key:create', '--workspace', workspaceId);
    expect(second.code).toBe(0);
    const third = await api.cli('key:create', '--workspace', workspaceId);
    expect(third).toEqual({ code: 1, json: { error: { code: 'LIMIT_APIKEYS', message: 'The Free plan allows 2 live keys; revoke one first' } } });
    expect((await api.cli('key:create', '--workspace', workspaceId, '--mode', 'test')).code).toBe(0);
  });
});
