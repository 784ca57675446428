import { Composition } from 'remotion';
import { Footage, Template, type SceneProps } from './scenes';

const DEFAULTS: SceneProps = { seconds: 10 };

export function Root() {
  return (
    <>
      <Composition id="Footage" component={Footage} width={1280} height={720} fps={30} durationInFrames={300} defaultProps={DEFAULTS}
        calculateMetadata={({ props }) => ({ durationInFrames: Math.round(props.seconds * 30) })} />
      <Composition id="Template" component={Template} width={1280} height={720} fps={30} durationInFrames={300} defaultProps={DEFAULTS}
        calculateMetadata={({ props }) => ({ durationInFrames: Math.round(props.seconds * 30) })} />
    </>
  );
}
