import { ApiError } from '#libs/core';
import { renderError, renderFailure } from './errors.js';

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
});
