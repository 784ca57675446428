import { ApiError } from '#libs/core';
import { renderError, renderFailure, runFailure } from './errors.js';

// One mapping from a job's failure to the render's `error` (decisions.md "Render record") and from
// that record to the HTTP answer (§7), for stills and videos alike.
describe('render errors', () => {
  it('keeps the code, message and errors of a refusal the caller caused', () => {
    const err = new ApiError('MEDIA_UNAVAILABLE', 'The image could not be fetched', { errors: { 'edit.timeline.tracks[0].clips[0].asset.src': ['HTTP 404'] } });
    expect(renderError(err, 'fetching')).toEqual({
      code: 'MEDIA_UNAVAILABLE', message: 'The image could not be fetched', stage: 'fetching',
      errors: { 'edit.timeline.tracks[0].clips[0].asset.src': ['HTTP 404'] },
    });
  });

  it('never shows the cause of a fault of ours', () => {
    const info = renderError(new Error('ENOSPC: /data/files/r/x.png'), 'saving');
    expect(info).toEqual({ code: 'INTERNAL_ERROR', message: 'The renderer failed; the credits were released', stage: 'saving' });
    expect(renderError(undefined, 'queued', 'The render could not be queued').message).toBe('The render could not be queued');
  });

  it('answers a failed render with its recorded code, status and errors', () => {
    const failure = renderFailure({ id: 'rnd_1', status: 'failed', error: { code: 'EMPTY_TIMELINE', message: 'Nothing to draw', stage: 'rendering', errors: { edit: ['empty'] } } });
    expect([failure.status, failure.code, failure.message, failure.extras]).toEqual([422, 'EMPTY_TIMELINE', 'Nothing to draw', { errors: { edit: ['empty'] }, data: { id: 'rnd_1', status: 'failed' } }]);
    // A code this build does not know (written by another version) is answered as INTERNAL_ERROR.
    expect(renderFailure({ id: 'rnd_2', status: 'failed', error: { code: 'SOMETHING_NEW', message: 'x', stage: 'rendering' } }).status).toBe(500);
    expect(renderFailure({ id: 'rnd_3', status: 'failed', error: null }).code).toBe('INTERNAL_ERROR');
  });

  describe('runFailure: a failed run of a video job (issue 27 "a deterministic render failure fails at once")', () => {
    const remotion = (port: number, token: string) => new Error(`Error loading image with src: http://127.0.0.1:${port}/${token}/f0.png at /tmp/video-engine/work/r-${token}/x.js:12:4\n    at stack`);

    it('fails a refusal the edit caused at once, whatever the run', () => {
      const err = new ApiError('MEDIA_UNAVAILABLE', 'The video could not be fetched');
      expect(runFailure(err, 'fetching', 1, 3)).toEqual({ code: 'MEDIA_UNAVAILABLE', message: 'The video could not be fetched', stage: 'fetching' });
    });

    it('runs a fault of ours again the first time, and again when the next run fails otherwise', () => {
      expect(runFailure(remotion(4100, 'aaaa1111bbbb2222'), 'rendering', 1, 3)).toBeUndefined();
      expect(runFailure(new Error('Target closed'), 'rendering', 2, 3, remotion(4100, 'aaaa1111bbbb2222').message)).toBeUndefined();
    });

    it('the same fault on two runs (ports, tokens and numbers aside) is RENDER_FAILED with the cause, no URL or file of ours in it', () => {
      const failure = runFailure(remotion(4200, 'cccc3333dddd4444'), 'rendering', 2, 3, remotion(4100, 'aaaa1111bbbb2222').message);
      expect(failure).toEqual({
        code: 'RENDER_FAILED',
        message: 'The render failed the same way on two runs, so it is not run again: Error loading image with src: <url> at <file>; the credits were released',
        stage: 'rendering',
      });
    });

    it('the same outage twice (a refused connection, a time-out, a closed browser, storage out of space) keeps its runs', () => {
      const refused = Object.assign(new Error('connect ECONNREFUSED 10.0.0.5:9000'), { code: 'ECONNREFUSED' });
      expect(runFailure(refused, 'saving', 2, 3, 'connect ECONNREFUSED 10.0.0.5:9000')).toBeUndefined();
      for (const message of ['Timeout exceeded rendering the component at frame 12', 'Protocol error (Runtime.callFunctionOn): Target closed', 'ENOSPC: no space left on device, write', 'socket hang up']) {
        expect([message, runFailure(new Error(message), 'rendering', 2, 3, message)]).toEqual([message, undefined]);
      }
      expect(runFailure(Object.assign(new Error('The server answered 503'), { transient: true }), 'fetching', 2, 3, 'The server answered 503')).toBeUndefined();
    });

    it('after the last run, a fault of ours is INTERNAL_ERROR without its cause', () => {
      expect(runFailure(new Error('Protocol error: Target closed at /tmp/x'), 'rendering', 3, 3, 'Navigation timeout')).toEqual({ code: 'INTERNAL_ERROR', message: 'The render failed 3 times; the credits were released', stage: 'rendering' });
    });
  });
});
