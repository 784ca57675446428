// A failed render in plain words (issue 29): "The video of clip 3 on track 1 could not be used: the
// server answered 404" first, the contract's code and message beside it. The paths of a render's
// error (`edit.timeline.tracks[0].clips[2].asset.src`) name what failed; the edit it was made from
// says what that is (a video, a picture, a font).

type Edit = { timeline?: { tracks?: { clips?: { asset?: { type?: string } }[] }[] } };

/** A clip's asset type as a person says it. */
const THING: Record<string, string> = {
  video: 'video',
  image: 'picture',
  audio: 'audio',
  text: 'text',
  'rich-text': 'text',
  html: 'HTML',
  title: 'title',
  luma: 'luma matte',
  caption: 'caption file',
  svg: 'SVG',
  shape: 'shape',
};

/** A path of the edit in words, or the path itself when it is none of the known places. */
export function pathInWords(path: string, edit?: Edit): string {
  const p = path.replace(/^edit\./, '');
  const clip = /^timeline\.tracks\[(\d+)\]\.clips\[(\d+)\](?:\.(.+))?$/.exec(p);
  if (clip) {
    const [track, index] = [Number(clip[1]), Number(clip[2])];
    const where = `clip ${index + 1} on track ${track + 1}`;
    const type = edit?.timeline?.tracks?.[track]?.clips?.[index]?.asset?.type;
    const rest = clip[3];
    if (!rest) return `${where}`;
    if (/^asset\.(src|html)$/.test(rest)) return `the ${type ? (THING[type] ?? type) : 'media file'} of ${where}`;
    return `${rest.replace(/^asset\./, '')} of ${where}`;
  }
  const font = /^timeline\.fonts\[(\d+)\]/.exec(p);
  if (font) return `font ${Number(font[1]) + 1} of the timeline`;
  if (/^timeline\.soundtrack/.test(p)) return 'the soundtrack';
  const merge = /^merge\[(\d+)\]/.exec(p);
  if (merge) return `merge field ${Number(merge[1]) + 1}`;
  return path;
}

/** The sentences for a render's error: one per failing path, or its message alone. */
export function failureInWords(error: { message: string; errors?: Record<string, string[]> } | null | undefined, edit?: Edit): string[] {
  if (!error) return ['The render failed.'];
  const lower = (s: string) => s.charAt(0).toLowerCase() + s.slice(1);
  const lines = Object.entries(error.errors ?? {}).map(([path, messages]) => {
    const what = pathInWords(path, edit);
    const why = messages.map(lower).join('; ');
    const sentence = path.endsWith('.src') || path.endsWith('.html') ? `${what} could not be used: ${why}` : `${what}: ${why}`;
    return `${sentence.charAt(0).toUpperCase()}${sentence.slice(1)}`;
  });
  return lines.length ? lines : [error.message];
}
