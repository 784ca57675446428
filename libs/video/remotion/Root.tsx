import { Composition } from 'remotion';
import type { EditProps } from '../src/props.js';
import { Edit } from './Edit';

/** Placeholder props: the engine always renders with the props of a real edit. */
const EMPTY: EditProps = {
  width: 160,
  height: 90,
  viewport: { width: 160, height: 90 },
  pixelRatio: 1,
  fps: 25,
  durationInFrames: 1,
  windowStart: 0,
  background: '#000000',
  timing: { tracks: [] },
  clips: {},
  mediaOrigin: '',
  fontFaces: '',
  still: false,
  muted: false,
};

/** The one composition: plays any normalised, timed edit (libs/video/src/props.ts). */
export function Root() {
  return (
    <Composition
      id="Edit"
      component={Edit}
      width={EMPTY.width}
      height={EMPTY.height}
      fps={EMPTY.fps}
      durationInFrames={EMPTY.durationInFrames}
      defaultProps={EMPTY}
      calculateMetadata={({ props }) => ({ width: props.width, height: props.height, fps: props.fps, durationInFrames: props.durationInFrames })}
    />
  );
}
