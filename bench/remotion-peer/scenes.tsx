import type { CSSProperties, ReactNode } from 'react';
import { AbsoluteFill, Audio, Easing, Img, interpolate, Sequence, staticFile, useCurrentFrame, useVideoConfig } from 'remotion';
import { Video } from '@remotion/media';

/** The inputs are the bundle's public files (the bench writes them there before bundling). */
export type SceneProps = { seconds: number };

const fade = (frame: number, fps: number, length: number, seconds: { in?: number; out?: number }) => {
  const total = length * fps;
  const a = seconds.in ? interpolate(frame, [0, seconds.in * fps], [0, 1], { extrapolateLeft: 'clamp', extrapolateRight: 'clamp' }) : 1;
  const b = seconds.out ? interpolate(frame, [total - seconds.out * fps, total], [1, 0], { extrapolateLeft: 'clamp', extrapolateRight: 'clamp' }) : 1;
  return Math.min(a, b);
};

/** Word-by-word rise of a headline over `duration` seconds. */
function Ascend({ text, duration, style }: { text: string; duration: number; style: CSSProperties }) {
  const frame = useCurrentFrame();
  const { fps } = useVideoConfig();
  const words = text.split(' ');
  const p = Math.min(1, frame / (duration * fps));
  return (
    <div style={style}>
      {words.map((w, i) => {
        const q = Easing.out(Easing.cubic)(Math.min(1, Math.max(0, (p - i / words.length) * words.length / 1.5)));
        return <span key={i} style={{ display: 'inline-block', opacity: q, transform: `translateY(${(1 - q) * 0.6}em)`, marginRight: '0.25em' }}>{w}</span>;
      })}
    </div>
  );
}

function Faded({ length, fadeIn, fadeOut, children }: { length: number; fadeIn?: number; fadeOut?: number; children: ReactNode }) {
  const frame = useCurrentFrame();
  const { fps } = useVideoConfig();
  return <AbsoluteFill style={{ opacity: fade(frame, fps, length, { in: fadeIn, out: fadeOut }) }}>{children}</AbsoluteFill>;
}

/** The bench's first scene: a zooming background video, a fading logo, two animated texts, a soundtrack. */
export function Footage({ seconds }: SceneProps) {
  const frame = useCurrentFrame();
  const { fps } = useVideoConfig();
  const zoom = 1 + 0.1 * (frame / (seconds * fps));
  return (
    <AbsoluteFill style={{ backgroundColor: '#000000' }}>
      <AbsoluteFill style={{ transform: `scale(${zoom})` }}>
        <Video src={staticFile(`background.mp4`)} style={{ width: '100%', height: '100%' }} muted />
      </AbsoluteFill>
      <Img src={staticFile(`logo.png`)} style={{ position: 'absolute', right: 38, top: 22, width: 160, height: 160, opacity: Math.min(1, frame / fps) }} />
      <Sequence from={2 * fps} durationInFrames={(seconds - 3) * fps} layout="none">
        <BoxedText seconds={seconds - 3} />
      </Sequence>
      <Sequence from={Math.round(0.5 * fps)} durationInFrames={(seconds - 1) * fps} layout="none">
        <Faded length={seconds - 1} fadeOut={1}>
          <Ascend text="Summer collection" duration={1.2} style={{ position: 'absolute', top: 58, width: '100%', textAlign: 'center', fontFamily: 'Inter', fontWeight: 800, fontSize: 84, color: '#ffffff', textShadow: '0 4px 12px rgba(0,0,0,0.5)' }} />
        </Faded>
      </Sequence>
      <Sequence from={0} layout="none">
        <Audio src={staticFile(`music.wav`)} volume={(f) => 0.8 * Math.min(1, f / (2 * fps), (seconds * fps - f) / (2 * fps))} />
      </Sequence>
    </AbsoluteFill>
  );
}

function BoxedText({ seconds }: { seconds: number }) {
  const frame = useCurrentFrame();
  const { fps } = useVideoConfig();
  const y = interpolate(frame, [0, fps], [-0.2, 0.08], { extrapolateRight: 'clamp', easing: Easing.out(Easing.back(1.7)) });
  return (
    <Faded length={seconds} fadeIn={1} fadeOut={1}>
      <div style={{ position: 'absolute', left: 190, width: 900, height: 110, bottom: 40 + y * -720, backgroundColor: 'rgba(255,255,255,0.9)', borderRadius: 24, padding: 20, boxSizing: 'border-box', fontFamily: 'Open Sans', fontSize: 44, color: '#111111', textAlign: 'center' }}>
        Up to 50 % off, this week only
      </div>
    </Faded>
  );
}

/**
 * The bench's second scene, typical of templates: three photos each holding ~3 s with 0.5 s fades
 * between them, a title that rises in and holds, a caption line that changes with each photo, a soundtrack.
 */
export function Template({ seconds }: SceneProps) {
  const { fps } = useVideoConfig();
  const photos = [0, 1, 2];
  const each = seconds / 3;
  const captions = ['Handmade in Lisbon', 'Linen that breathes', 'Free returns, always'];
  return (
    <AbsoluteFill style={{ backgroundColor: '#101010' }}>
      {photos.map((i) => (
        <Sequence key={i} from={Math.round(i * each * fps)} durationInFrames={Math.round((each + (i < 2 ? 0.5 : 0)) * fps)} layout="none">
          <Faded length={each + (i < 2 ? 0.5 : 0)} fadeIn={i > 0 ? 0.5 : undefined}>
            <Img src={staticFile(`photo-${i + 1}.jpg`)} style={{ width: '100%', height: '100%', objectFit: 'cover' }} />
          </Faded>
        </Sequence>
      ))}
      <Sequence from={Math.round(0.3 * fps)} layout="none">
        <Faded length={seconds} fadeIn={0.5}>
          <div style={{ position: 'absolute', top: 60, width: '100%', textAlign: 'center', fontFamily: 'Inter', fontWeight: 800, fontSize: 72, color: '#ffffff', textShadow: '0 4px 12px rgba(0,0,0,0.5)' }}>Autumn edit</div>
        </Faded>
      </Sequence>
      {captions.map((text, i) => (
        <Sequence key={text} from={Math.round((i * each + 0.5) * fps)} durationInFrames={Math.round((each - 0.5) * fps)} layout="none">
          <div style={{ position: 'absolute', bottom: 60, width: '100%', textAlign: 'center' }}>
            <span style={{ fontFamily: 'Open Sans', fontSize: 40, color: '#111111', backgroundColor: 'rgba(255,255,255,0.9)', padding: '12px 24px', borderRadius: 16 }}>{text}</span>
          </div>
        </Sequence>
      ))}
      <Audio src={staticFile(`music.wav`)} volume={(f) => 0.8 * Math.min(1, f / (2 * fps), (seconds * fps - f) / (2 * fps))} />
    </AbsoluteFill>
  );
}
