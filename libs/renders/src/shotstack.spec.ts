import type { Render } from './entities.js';
import { shotstackRender, shotstackStatus } from './shotstack.js';

// Issue 21, the Shotstack door: our render record in Shotstack's RenderResponse shape (decisions.md "Shotstack door").

const at = new Date('2026-11-27T10:00:00.000Z');
const row = (o: Partial<Render>): Render => ({
  id: 'rnd_1', status: 'done', duration: 4, renderTime: 1234, createdAt: at, updatedAt: new Date(at.getTime() + 5000), error: null, edit: { timeline: {} }, ...o,
}) as Render;
const urls = { url: 'https://cdn.example/out.mp4', posterUrl: 'https://cdn.example/poster.jpg', thumbnailUrl: null };

describe('the Shotstack door\'s render shape', () => {
  it('maps every one of our statuses to one of Shotstack\'s six; cancelled is failed', () => {
    expect(['queued', 'fetching', 'rendering', 'saving', 'done', 'failed', 'cancelled'].map((s) => shotstackStatus(s as Render['status'])))
      .toEqual(['queued', 'fetching', 'rendering', 'saving', 'done', 'failed', 'failed']);
  });

  it('a done video: url, poster, duration in seconds, renderTime in ms, no thumbnail or data unless there are some', () => {
    expect(shotstackRender(row({}), urls, { owner: 'org_1', plan: 'pro', data: false })).toEqual({
      success: true, message: 'OK',
      response: {
        id: 'rnd_1', owner: 'org_1', plan: 'pro', status: 'done', duration: 4, renderTime: 1234, url: urls.url, poster: urls.posterUrl,
        created: '2026-11-27T10:00:00.000Z', updated: '2026-11-27T10:00:05.000Z',
      },
    });
  });

  it('a failed render carries "CODE: message"; a cancelled one says so; data only when asked for', () => {
    const failed = shotstackRender(row({ status: 'failed', error: { code: 'MEDIA_UNAVAILABLE', message: 'clip.mp4 answered 404', stage: 'fetching' } }), { url: null, posterUrl: null, thumbnailUrl: null }, { owner: 'o', plan: 'free', data: true });
    expect(failed.response).toMatchObject({ status: 'failed', error: 'MEDIA_UNAVAILABLE: clip.mp4 answered 404', data: { timeline: {} } });
    expect(failed.response).not.toHaveProperty('url');
    expect(shotstackRender(row({ status: 'cancelled' }), urls, { owner: 'o', plan: 'free', data: false }).response).toMatchObject({ status: 'failed', error: 'Cancelled by the caller' });
  });
});
