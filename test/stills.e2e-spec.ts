import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { INestApplicationContext } from '@nestjs/common';
import sharp from 'sharp';
import type { QueueEvents } from 'bullmq';
import { assertEdit, type JsonValue } from '#libs/edit-spec';
import { JobQueues, type EditSpecJson, type StillRenderResult } from '#libs/queue';
import { createStorage, libraryKey, outputKey } from '#libs/storage';
import { createWorkerApp } from '../apps/worker/src/app.js';
import { queueEvents, testContext, type TestContext } from './harness.js';

/** Issue 4: the worker draws stills from their own queue and stores them (§4.1 stills). */
describe('worker: still.render jobs', () => {
  let ctx: TestContext;
  let worker: INestApplicationContext;
  let queues: JobQueues;
  let events: QueueEvents;
  let server: Server;
  let origin: string;
  let photo: Buffer;

  beforeAll(async () => {
    ctx = await testContext();
    worker = await createWorkerApp(ctx.config);
    queues = worker.get(JobQueues);
    events = await queueEvents(queues, 'stills');
    photo = await sharp({ create: { width: 400, height: 300, channels: 3, background: '#2a9d8f' } }).jpeg().toBuffer();
    server = createServer((req, res) => {
      if (req.url === '/photo.jpg') return void res.writeHead(200, { 'content-type': 'image/jpeg' }).end(photo);
      res.writeHead(404).end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.close();
    await events.close();
    await worker.close();
    await ctx.cleanup();
  });

  const edit = (tracks: JsonValue[], format = 'png') =>
    assertEdit({ timeline: { background: '#ffffff', tracks: tracks.map((c) => ({ clips: [c] })) }, output: { format, size: { width: 320, height: 200 } } }) as unknown as EditSpecJson;
  const render = async (data: { edit: EditSpecJson; key: string; scale?: number; watermark?: boolean }): Promise<StillRenderResult> => {
    const job = await queues.add('still.render', { scale: 1, watermark: false, ...data });
    return job.waitUntilFinished(events, 20_000);
  };

  it('draws a remote image and text, stores the PNG and answers its URL, size and type', async () => {
    const key = outputKey('rnd_still_1', 'png');
    const result = await render({
      edit: edit([
        { asset: { type: 'text', text: 'Hello', font: { family: 'Roboto', size: 40, color: '#000000' } }, start: 0, length: 2 },
        { asset: { type: 'image', src: `${origin}/photo.jpg` }, start: 0, length: 2, scale: 0.5 },
      ]),
      key,
      scale: 2,
    });
    expect(result).toMatchObject({ ok: true, key, format: 'png', contentType: 'image/png', width: 640, height: 400 });
    if (!result.ok) return;
    const storage = createStorage(ctx.config);
    expect(storage.keyFromUrl(result.url)).toBe(key);
    if (ctx.config.storage.driver === 'local') expect(result.url).toBe(`${ctx.config.publicUrl}/files/${key}`);
    else expect((await fetch(result.url)).status).toBe(200); // straight from the bucket
    const stat = await storage.stat(key);
    expect(stat?.sizeBytes).toBe(result.sizeBytes);
    const chunks: Buffer[] = [];
    for await (const c of await storage.read(key)) chunks.push(c as Buffer);
    const meta = await sharp(Buffer.concat(chunks)).metadata();
    expect([meta.width, meta.height]).toEqual([640, 400]);
  });

  it('reads our own stored files from storage, not over HTTP', async () => {
    const storage = createStorage(ctx.config);
    const red = await sharp({ create: { width: 10, height: 10, channels: 3, background: '#ff0000' } }).png().toBuffer();
    await storage.put(libraryKey('red.png'), red);
    const result = await render({ edit: edit([{ asset: { type: 'image', src: storage.url(libraryKey('red.png')) }, start: 0, length: 2 }], 'jpeg'), key: outputKey('rnd_still_2', 'jpg') });
    expect(result).toMatchObject({ ok: true, format: 'jpeg', contentType: 'image/jpeg' });
    if (!result.ok) return;
    const chunks: Buffer[] = [];
    for await (const c of await storage.read(result.key)) chunks.push(c as Buffer);
    const { dominant } = await sharp(Buffer.concat(chunks)).stats();
    expect(dominant.r).toBeGreaterThan(200);
    expect(dominant.g).toBeLessThan(60);
  });

  it('answers a caller error with its code and paths instead of failing the job', async () => {
    const missing = await render({ edit: edit([{ asset: { type: 'image', src: `${origin}/missing.jpg` }, start: 0, length: 2 }]), key: outputKey('rnd_still_3', 'png') });
    expect(missing).toEqual({ ok: false, error: { code: 'MEDIA_UNAVAILABLE', message: expect.any(String), errors: { 'edit.timeline.tracks[0].clips[0].asset.src': ['The server answered 404'] } } });
    const key = outputKey('rnd_still_4', 'png');
    const html = await render({ edit: edit([{ asset: { type: 'html', html: '<p>x</p>', width: 100, height: 50 }, start: 0, length: 2 }]), key });
    expect(html).toMatchObject({ ok: false, error: { code: 'UNSUPPORTED_ASSET' } });
    expect(await createStorage(ctx.config).stat(key)).toBeUndefined();
  });
});
