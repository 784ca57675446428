import { repoFolder } from '#libs/core';

export type StockAssetType = 'image' | 'video' | 'audio' | 'font' | 'lottie' | 'svg';

/** One item of the stock (`global`) library: a redistributable file, its source and its licence. */
export interface StockItem {
  /** Stable forever: the asset id is `ast_lib_<slug with '-' as '_'>`. */
  slug: string;
  type: StockAssetType;
  name: string;
  description: string;
  /** Lower-case, at most 20. */
  tags: string[];
  folder: string;
  /** Where the file comes from: a Debian package and its path, or the project's generator. */
  source: string;
  /** SPDX licence id (or expression) as the source's copyright file gives it. */
  licence: string;
  /** An absolute path installed by a Debian package, or a file name under libs/assets/stock/files. */
  file: { debian: string } | { bundled: string };
}

const GENERATOR = 'libs/assets/stock/make-stock.mjs';
const MADE = `Made by the project: ${GENERATOR}`;

type Described = Pick<StockItem, 'name' | 'description' | 'tags'>;

/** Items the generator makes (CC0, LICENCES.md), of one type and folder: the slug is the file name without its extension. */
const made = (type: StockAssetType, folder: string, source = MADE) => (file: string, item: Described): StockItem =>
  ({ slug: file.replace(/\.[a-z0-9]+$/, ''), ...item, type, folder, source, licence: 'CC0-1.0', file: { bundled: file } });

/** A file installed by a Debian package (scripts/stock-packages.txt installs the package). */
function debian(type: StockAssetType, folder: string, pkg: string, path: string, licence: string, item: Described & { slug: string }): StockItem {
  return { ...item, type, folder, source: `Debian package ${pkg}: ${path}`, licence, file: { debian: path } };
}

const background = made('image', 'backgrounds');
const texture = made('image', 'textures');
const shape = made('svg', 'shapes');
const icon = made('svg', 'icons');
const loop = made('video', 'loops');
const sound = made('audio', 'sounds');
const animation = made('lottie', 'animations');
/** The template library's pictures (CC0, libs/templates/seed/MEDIA-LICENCES.md), copied by the generator. */
const TEMPLATE_SOURCE = `Made by the project: libs/templates/seed/generate-media.mjs (copied by ${GENERATOR})`;
const templateBackground = made('image', 'backgrounds', TEMPLATE_SOURCE);
const templatePicture = made('image', 'photos', TEMPLATE_SOURCE);
const templateGraphic = made('image', 'graphics', TEMPLATE_SOURCE);

const FONTS = '/usr/share/fonts';
function font(slug: string, name: string, pkg: string, path: string, licence: string, description: string, tags: string[]): StockItem {
  return debian('font', 'fonts', pkg, `${FONTS}/${path}`, licence, { slug, name, description, tags: ['font', ...tags] });
}

const FREEDESKTOP = '/usr/share/sounds/freedesktop/stereo';
const freedesktop = (file: string, licence: string, author: string, item: Described) =>
  debian('audio', 'sounds', 'sound-theme-freedesktop', `${FREEDESKTOP}/${file}.oga`, licence,
    { ...item, slug: `freedesktop-${file}`, description: `${item.description} By ${author} (freedesktop.org sound theme).`, tags: ['sound', 'ogg', ...item.tags] });

const YARU = '/usr/share/sounds/Yaru/stereo';
const yaru = (file: string, item: Described) =>
  debian('audio', 'sounds', 'yaru-theme-sound', `${YARU}/${file}.oga`, 'CC-BY-SA-4.0',
    { ...item, slug: `yaru-${file}`, description: `${item.description} By Mads Rosendahl (Yaru sound theme).`, tags: ['sound', 'ogg', 'yaru', ...item.tags] });

export const STOCK_ITEMS: readonly StockItem[] = [
  // Backgrounds
  background('gradient-sunrise.jpg', { name: 'Sunrise gradient', description: 'Orange to pink to violet diagonal gradient, 1920×1080.', tags: ['background', 'gradient', 'orange', 'pink', 'violet', 'warm', 'landscape'] }),
  background('gradient-ocean.jpg', { name: 'Ocean gradient', description: 'Sky blue fading to deep navy, 1920×1080.', tags: ['background', 'gradient', 'blue', 'navy', 'cool', 'landscape'] }),
  background('gradient-mint.webp', { name: 'Mint gradient', description: 'Soft mint, cyan and pale blue gradient, 1920×1080 (WebP).', tags: ['background', 'gradient', 'mint', 'cyan', 'pastel', 'light', 'landscape'] }),
  background('gradient-midnight.png', { name: 'Midnight gradient', description: 'Near-black to slate vertical gradient for text-heavy slides, 1280×720.', tags: ['background', 'gradient', 'dark', 'slate', 'minimal', 'landscape'] }),
  background('gradient-glow-vertical.jpg', { name: 'Rose glow (vertical)', description: 'Rose radial glow on deep indigo in story format, 1080×1920.', tags: ['background', 'gradient', 'radial', 'pink', 'indigo', 'vertical', 'story'] }),
  background('gradient-pastel-mesh.jpg', { name: 'Pastel mesh', description: 'Blurred lavender, mint, pink and butter colour fields, 1080×1080.', tags: ['background', 'mesh', 'pastel', 'soft', 'light', 'square'] }),
  templateBackground('bg-aurora.jpg', { name: 'Aurora background', description: 'Blurred violet, pink and cyan colour fields on navy, 1080×1080.', tags: ['background', 'aurora', 'dark', 'violet', 'pink', 'cyan', 'square'] }),
  templateBackground('bg-sunset-waves.jpg', { name: 'Sunset waves', description: 'Sunset sky over layered waves, 1920×1080.', tags: ['background', 'sunset', 'waves', 'warm', 'landscape'] }),
  templateBackground('bg-mesh-dark.jpg', { name: 'Dark mesh', description: 'Dark grid with soft blue and teal glows, 1280×720.', tags: ['background', 'dark', 'grid', 'tech', 'blue', 'teal', 'landscape'] }),
  // Textures
  texture('texture-paper.jpg', { name: 'Soft paper texture', description: 'Warm off-white paper with faint fibres and mottling; tiles seamlessly, 1024×1024.', tags: ['texture', 'paper', 'beige', 'light', 'seamless', 'tile'] }),
  texture('texture-concrete.webp', { name: 'Concrete texture', description: 'Grey concrete with cloudy patches and fine speckle; tiles seamlessly, 1024×1024 (WebP).', tags: ['texture', 'concrete', 'grey', 'stone', 'seamless', 'tile'] }),
  texture('texture-film-grain.png', { name: 'Film grain overlay', description: 'Transparent grain to lay over pictures for a filmic look; tiles, 256×256.', tags: ['texture', 'grain', 'noise', 'overlay', 'transparent', 'tile'] }),
  texture('texture-grid-dark.png', { name: 'Blueprint grid', description: 'Fine and coarse grid lines on dark slate, 1920×1080.', tags: ['texture', 'grid', 'dark', 'tech', 'lines', 'landscape'] }),
  texture('texture-halftone.png', { name: 'Halftone dots', description: 'Dark halftone dots growing across a transparent square, 1024×1024.', tags: ['texture', 'halftone', 'dots', 'pattern', 'transparent', 'retro'] }),
  // Pictures of the template library
  templatePicture('photo-mountains.jpg', { name: 'Mountains and pines', description: 'Flat illustration of mountains and a pine forest, 1280×720.', tags: ['illustration', 'mountains', 'nature', 'landscape', 'outdoors'] }),
  templatePicture('photo-city.jpg', { name: 'City at dusk', description: 'Flat illustration of a city skyline at dusk with lit windows, 1280×720.', tags: ['illustration', 'city', 'skyline', 'night', 'urban', 'landscape'] }),
  templatePicture('photo-beach.jpg', { name: 'Beach at sunset', description: 'Flat illustration of a beach with a palm at sunset, 1280×720.', tags: ['illustration', 'beach', 'sea', 'summer', 'travel', 'landscape'] }),
  templatePicture('product-mug.png', { name: 'Stoneware mug', description: 'Illustrated mug with an orange band on a transparent background, 1000×1000.', tags: ['illustration', 'product', 'mug', 'coffee', 'transparent'] }),
  templatePicture('avatar-portrait.jpg', { name: 'Portrait avatar', description: 'Illustrated portrait on a pastel gradient, 800×800.', tags: ['illustration', 'avatar', 'portrait', 'person', 'square'] }),
  templateGraphic('logo-mark.png', { name: 'Placeholder logo', description: 'Two overlapping rounded squares on a transparent background, 512×512.', tags: ['logo', 'placeholder', 'brand', 'transparent'] }),
  templateGraphic('seal-gold.png', { name: 'Gold seal', description: 'Gold rosette seal with a star on a transparent background, 400×400.', tags: ['seal', 'badge', 'award', 'gold', 'certificate', 'transparent'] }),
  // Shapes (SVG)
  shape('shape-circle.svg', { name: 'Gradient circle', description: 'Circle with a cyan to indigo gradient.', tags: ['shape', 'circle', 'gradient', 'cyan', 'indigo'] }),
  shape('shape-rounded-square.svg', { name: 'Rounded square', description: 'Orange square with rounded corners.', tags: ['shape', 'square', 'rounded', 'orange'] }),
  shape('shape-star.svg', { name: 'Star', description: 'Five-pointed yellow star.', tags: ['shape', 'star', 'yellow'] }),
  shape('shape-blob.svg', { name: 'Blob', description: 'Smooth organic pink blob.', tags: ['shape', 'blob', 'organic', 'pink'] }),
  shape('shape-hexagon.svg', { name: 'Hexagon', description: 'Emerald hexagon standing on a point.', tags: ['shape', 'hexagon', 'green'] }),
  shape('shape-wave-divider.svg', { name: 'Wave divider', description: 'Wide indigo wave to separate two sections, 1440×120.', tags: ['shape', 'wave', 'divider', 'indigo', 'section'] }),
  shape('shape-speech-bubble.svg', { name: 'Speech bubble', description: 'White speech bubble with a dark outline, for quotes and captions.', tags: ['shape', 'speech', 'bubble', 'quote', 'comic'] }),
  shape('shape-arrow-right.svg', { name: 'Block arrow', description: 'Solid dark arrow pointing right.', tags: ['shape', 'arrow', 'right', 'direction'] }),
  // Icons (SVG)
  icon('icon-play.svg', { name: 'Play icon', description: 'Play triangle in a circle, line style.', tags: ['icon', 'play', 'video', 'media', 'line'] }),
  icon('icon-check.svg', { name: 'Check icon', description: 'Check mark in a circle, line style.', tags: ['icon', 'check', 'done', 'success', 'line'] }),
  icon('icon-heart.svg', { name: 'Heart icon', description: 'Heart outline, line style.', tags: ['icon', 'heart', 'like', 'love', 'line'] }),
  icon('icon-location-pin.svg', { name: 'Location pin icon', description: 'Map pin, line style.', tags: ['icon', 'location', 'map', 'pin', 'line'] }),
  icon('icon-mail.svg', { name: 'Mail icon', description: 'Envelope, line style.', tags: ['icon', 'mail', 'email', 'contact', 'line'] }),
  icon('icon-calendar.svg', { name: 'Calendar icon', description: 'Calendar page with dates, line style.', tags: ['icon', 'calendar', 'date', 'event', 'line'] }),
  icon('icon-bell.svg', { name: 'Bell icon', description: 'Notification bell, line style.', tags: ['icon', 'bell', 'notification', 'alert', 'line'] }),
  icon('icon-search.svg', { name: 'Search icon', description: 'Magnifying glass, line style.', tags: ['icon', 'search', 'find', 'magnifier', 'line'] }),
  icon('icon-arrow-up-right.svg', { name: 'Arrow up-right icon', description: 'Diagonal arrow for links and growth, line style.', tags: ['icon', 'arrow', 'link', 'external', 'line'] }),
  icon('icon-star.svg', { name: 'Star icon', description: 'Star outline for ratings, line style.', tags: ['icon', 'star', 'rating', 'favourite', 'line'] }),
  // Video loops
  loop('loop-aurora-drift.mp4', { name: 'Aurora drift loop', description: 'Violet, pink and cyan colour fields circling over navy; seamless 4 s loop, 1280×720 H.264.', tags: ['loop', 'background', 'aurora', 'gradient', 'dark', 'seamless', 'landscape'] }),
  loop('loop-bokeh.mp4', { name: 'Bokeh loop', description: 'Soft out-of-focus lights drifting on dark blue; seamless 4 s loop, 1280×720 H.264.', tags: ['loop', 'background', 'bokeh', 'lights', 'dark', 'seamless', 'landscape'] }),
  loop('loop-waves.mp4', { name: 'Waves loop', description: 'Layered blue and violet waves rolling; seamless 3 s loop, 1280×720 H.264.', tags: ['loop', 'background', 'waves', 'blue', 'light', 'seamless', 'landscape'] }),
  loop('loop-rings-square.mp4', { name: 'Pulsing rings loop', description: 'Amber rings spreading from the centre on charcoal; seamless 2 s loop, 720×720 H.264.', tags: ['loop', 'rings', 'pulse', 'amber', 'dark', 'seamless', 'square'] }),
  loop('loop-particles-vertical.mp4', { name: 'Rising particles (vertical)', description: 'Golden particles rising over an indigo gradient; seamless 4 s loop, 720×1280 H.264 for stories.', tags: ['loop', 'background', 'particles', 'gold', 'dark', 'seamless', 'vertical', 'story'] }),
  loop('loop-stripes.webm', { name: 'Moving stripes loop', description: 'Amber diagonal stripes sliding sideways; seamless 2 s loop, 1280×720 VP9 WebM.', tags: ['loop', 'background', 'stripes', 'amber', 'pattern', 'seamless', 'webm'] }),
  // Sounds made by the project
  sound('stinger-rise.mp3', { name: 'Rising stinger', description: 'Upward two-tone sweep for reveals and transitions (1.6 s, MP3).', tags: ['sound', 'stinger', 'rise', 'transition', 'reveal', 'mp3'] }),
  sound('stinger-chime.mp3', { name: 'Chime stinger', description: 'Four-note rising chime for intros and success moments (2.2 s, MP3).', tags: ['sound', 'stinger', 'chime', 'success', 'intro', 'mp3'] }),
  sound('whoosh.mp3', { name: 'Whoosh', description: 'Soft filtered-noise whoosh for cuts and slides (1.2 s, MP3).', tags: ['sound', 'whoosh', 'transition', 'swipe', 'mp3'] }),
  sound('tone-a440.wav', { name: 'A440 test tone', description: 'One second of a pure 440 Hz sine (WAV).', tags: ['sound', 'tone', 'sine', 'test', 'wav'] }),
  sound('metronome-120bpm.wav', { name: 'Metronome 120 bpm', description: 'Four metronome ticks at 120 bpm, the first accented (2 s, WAV).', tags: ['sound', 'metronome', 'tick', 'count-in', 'rhythm', 'wav'] }),
  sound('pad-a-minor.flac', { name: 'A minor pad', description: 'Soft sustained A minor chord that swells and fades (4 s, FLAC).', tags: ['sound', 'pad', 'chord', 'ambient', 'music', 'flac'] }),
  // Sounds from Debian's sound themes
  freedesktop('bell', 'CC-BY-3.0', 'Dr. Richard Boulanger et al', { name: 'Bell (freedesktop)', description: 'A short bright bell.', tags: ['bell', 'alert', 'short'] }),
  freedesktop('complete', 'CC-BY-3.0', 'Dr. Richard Boulanger et al', { name: 'Complete (freedesktop)', description: 'A gentle chime for a finished task.', tags: ['complete', 'success', 'chime'] }),
  freedesktop('trash-empty', 'CC-BY-3.0', 'Dr. Richard Boulanger et al', { name: 'Trash empty (freedesktop)', description: 'Crumpling, emptying sound.', tags: ['trash', 'delete', 'crumple'] }),
  freedesktop('camera-shutter', 'CC-BY-SA-3.0', 'freesound user horsthorstensen', { name: 'Camera shutter (freedesktop)', description: 'A camera shutter click for photo moments.', tags: ['camera', 'shutter', 'photo', 'click'] }),
  freedesktop('message', 'CC-BY-SA-3.0', 'Ivica Bukvic', { name: 'Message (freedesktop)', description: 'A soft notification blip.', tags: ['message', 'notification', 'blip'] }),
  freedesktop('alarm-clock-elapsed', 'CC-BY-SA-3.0', 'Tim/corsica_s', { name: 'Alarm clock (freedesktop)', description: 'An alarm clock ringing (6 s).', tags: ['alarm', 'clock', 'ring', 'timer'] }),
  freedesktop('phone-incoming-call', 'GPL-2.0-or-later', 'Damien Sandras', { name: 'Incoming call (freedesktop)', description: 'A phone ringtone phrase.', tags: ['phone', 'call', 'ringtone'] }),
  yaru('desktop-login', { name: 'Welcome (Yaru)', description: 'A warm four-second welcome phrase.', tags: ['welcome', 'intro', 'startup', 'music'] }),
  yaru('complete', { name: 'Complete (Yaru)', description: 'A bright completion chime.', tags: ['complete', 'success', 'chime'] }),
  yaru('message-new-instant', { name: 'New message (Yaru)', description: 'A light two-note message pop.', tags: ['message', 'notification', 'pop'] }),
  yaru('dialog-question', { name: 'Question (Yaru)', description: 'A rising, questioning tone.', tags: ['question', 'dialog', 'prompt'] }),
  yaru('bell', { name: 'Bell (Yaru)', description: 'A soft bell tap.', tags: ['bell', 'alert', 'short'] }),
  // Fonts from Debian's font packages
  font('lato-regular', 'Lato Regular', 'fonts-lato', 'truetype/lato/Lato-Regular.ttf', 'OFL-1.1', 'Warm, semi-rounded sans-serif for body text. By Łukasz Dziedzic.', ['lato', 'sans-serif', 'regular', 'ttf']),
  font('lato-bold', 'Lato Bold', 'fonts-lato', 'truetype/lato/Lato-Bold.ttf', 'OFL-1.1', 'Lato in bold for headings. By Łukasz Dziedzic.', ['lato', 'sans-serif', 'bold', 'ttf']),
  font('lato-light-italic', 'Lato Light Italic', 'fonts-lato', 'truetype/lato/Lato-LightItalic.ttf', 'OFL-1.1', 'Lato light italic for captions and quotes. By Łukasz Dziedzic.', ['lato', 'sans-serif', 'light', 'italic', 'ttf']),
  font('open-sans-regular', 'Open Sans Regular', 'fonts-open-sans', 'truetype/open-sans/OpenSans-Regular.ttf', 'Apache-2.0', 'Neutral, very legible humanist sans-serif. By Steve Matteson for Google.', ['open-sans', 'sans-serif', 'regular', 'ttf']),
  font('open-sans-bold', 'Open Sans Bold', 'fonts-open-sans', 'truetype/open-sans/OpenSans-Bold.ttf', 'Apache-2.0', 'Open Sans in bold. By Steve Matteson for Google.', ['open-sans', 'sans-serif', 'bold', 'ttf']),
  font('roboto-regular', 'Roboto Regular', 'fonts-roboto-unhinted', 'truetype/roboto/unhinted/RobotoTTF/Roboto-Regular.ttf', 'Apache-2.0', 'Android\'s geometric-grotesque sans-serif. By Google.', ['roboto', 'sans-serif', 'regular', 'ttf']),
  font('roboto-black', 'Roboto Black', 'fonts-roboto-unhinted', 'truetype/roboto/unhinted/RobotoTTF/Roboto-Black.ttf', 'Apache-2.0', 'Roboto at its heaviest weight for punchy titles. By Google.', ['roboto', 'sans-serif', 'black', 'heavy', 'ttf']),
  font('roboto-condensed-bold', 'Roboto Condensed Bold', 'fonts-roboto-unhinted', 'truetype/roboto/unhinted/RobotoCondensed-Bold.ttf', 'Apache-2.0', 'Narrow bold Roboto for long headlines and lower thirds. By Google.', ['roboto', 'sans-serif', 'condensed', 'bold', 'ttf']),
  font('inter-regular', 'Inter Regular', 'fonts-inter', 'opentype/inter/Inter-Regular.otf', 'OFL-1.1 AND Apache-2.0', 'Sans-serif designed for screens. By the Inter Project Authors.', ['inter', 'sans-serif', 'regular', 'ui', 'otf']),
  font('inter-semibold', 'Inter Semi Bold', 'fonts-inter', 'opentype/inter/Inter-SemiBold.otf', 'OFL-1.1 AND Apache-2.0', 'Inter semi bold for headings and buttons. By the Inter Project Authors.', ['inter', 'sans-serif', 'semibold', 'ui', 'otf']),
  font('bebas-neue-regular', 'Bebas Neue Regular', 'fonts-bebas-neue', 'opentype/bebas-neue/BebasNeue-Regular.otf', 'OFL-1.1', 'Tall all-caps display face for posters and thumbnails. By Ryoichi Tsunekawa.', ['bebas-neue', 'display', 'condensed', 'caps', 'otf']),
  font('lobster-two-bold-italic', 'Lobster Two Bold Italic', 'fonts-lobster', 'opentype/lobster/lobster.otf', 'OFL-1.1', 'Bold connected script for playful titles. By Pablo Impallari.', ['lobster', 'script', 'display', 'bold', 'italic', 'otf']),
  font('eb-garamond-regular', 'EB Garamond Regular', 'fonts-ebgaramond', 'opentype/ebgaramond/EBGaramond12-Regular.otf', 'OFL-1.1', 'Classic Garamond old-style serif for elegant text. By Georg Duffner.', ['eb-garamond', 'serif', 'regular', 'classic', 'otf']),
  font('eb-garamond-italic', 'EB Garamond Italic', 'fonts-ebgaramond', 'opentype/ebgaramond/EBGaramond12-Italic.otf', 'OFL-1.1', 'EB Garamond italic for quotes and invitations. By Georg Duffner.', ['eb-garamond', 'serif', 'italic', 'classic', 'otf']),
  font('comfortaa-bold', 'Comfortaa Bold', 'fonts-comfortaa', 'truetype/comfortaa/Comfortaa-Bold.ttf', 'OFL-1.1', 'Rounded geometric display sans-serif. By Johan Aakerlund.', ['comfortaa', 'rounded', 'display', 'bold', 'ttf']),
  font('league-spartan-bold', 'League Spartan Bold', 'fonts-league-spartan', 'opentype/league-spartan/LeagueSpartan-Bold.otf', 'OFL-1.1', 'Bold geometric sans-serif for headlines. By Micah Rich.', ['league-spartan', 'sans-serif', 'geometric', 'bold', 'otf']),
  font('cabin-regular', 'Cabin Regular', 'fonts-cabin', 'opentype/cabin/Cabin-Regular.otf', 'OFL-1.1', 'Humanist sans-serif with a friendly touch. By Pablo Impallari and Igino Marini.', ['cabin', 'sans-serif', 'humanist', 'regular', 'otf']),
  font('dejavu-sans-mono', 'DejaVu Sans Mono', 'fonts-dejavu-core', 'truetype/dejavu/DejaVuSansMono.ttf', 'Bitstream-Vera', 'Monospaced face for code and terminals. Bitstream Vera with the DejaVu changes (public domain).', ['dejavu', 'monospace', 'code', 'regular', 'ttf']),
  font('liberation-serif-regular', 'Liberation Serif Regular', 'fonts-liberation2', 'truetype/liberation2/LiberationSerif-Regular.ttf', 'OFL-1.1', 'Times-compatible serif for documents and certificates. By Steve Matteson and Red Hat.', ['liberation', 'serif', 'regular', 'times', 'ttf']),
  // Fonts repacked by the generator (font data unchanged)
  {
    slug: 'roboto-regular-woff', type: 'font', folder: 'fonts', name: 'Roboto Regular (WOFF)',
    description: 'Roboto Regular packed as WOFF 1.0 (zlib-compressed tables, font data unchanged). By Google.',
    tags: ['font', 'roboto', 'sans-serif', 'regular', 'woff', 'web'],
    source: `Debian package fonts-roboto-unhinted: ${FONTS}/truetype/roboto/unhinted/RobotoTTF/Roboto-Regular.ttf, packed as WOFF by ${GENERATOR}`,
    licence: 'Apache-2.0', file: { bundled: 'roboto-regular.woff' },
  },
  {
    slug: 'roboto-bold-woff2', type: 'font', folder: 'fonts', name: 'Roboto Bold (WOFF2)',
    description: 'Roboto Bold packed as WOFF2 with Google\'s woff2 encoder (wawoff2). By Google.',
    tags: ['font', 'roboto', 'sans-serif', 'bold', 'woff2', 'web'],
    source: `Debian package fonts-roboto-unhinted: ${FONTS}/truetype/roboto/unhinted/RobotoTTF/Roboto-Bold.ttf, packed as WOFF2 by ${GENERATOR}`,
    licence: 'Apache-2.0', file: { bundled: 'roboto-bold.woff2' },
  },
  // Lottie animations
  animation('lottie-pulse-dot.json', { name: 'Pulse dot', description: 'Indigo dot breathing with a ring spreading out; 2 s loop, 200×200.', tags: ['lottie', 'animation', 'pulse', 'dot', 'live', 'loop'] }),
  animation('lottie-loading-spinner.json', { name: 'Loading spinner', description: 'Sky-blue arc chasing round a grey track; 1.5 s loop, 200×200.', tags: ['lottie', 'animation', 'loading', 'spinner', 'progress', 'loop'] }),
  animation('lottie-bouncing-ball.json', { name: 'Bouncing ball', description: 'Orange ball bouncing with squash and a shadow; 1.6 s loop, 240×240.', tags: ['lottie', 'animation', 'ball', 'bounce', 'playful', 'loop'] }),
  animation('lottie-check-mark.json', { name: 'Success check', description: 'Green disc pops in and a white check draws itself; 2 s, 200×200.', tags: ['lottie', 'animation', 'check', 'success', 'done'] }),
  animation('lottie-equalizer.json', { name: 'Equalizer bars', description: 'Four violet bars bouncing like a music equalizer; 1.3 s loop, 200×200.', tags: ['lottie', 'animation', 'equalizer', 'music', 'audio', 'loop'] }),
  animation('lottie-heart-beat.json', { name: 'Heart beat', description: 'Red heart beating twice then resting; 1.3 s loop, 200×200.', tags: ['lottie', 'animation', 'heart', 'like', 'love', 'loop'] }),
];

/** The Debian packages the catalog's `debian` files come from (scripts/stock-packages.txt installs them). */
export const STOCK_DEBIAN_PACKAGES: readonly string[] = [
  ...new Set(STOCK_ITEMS.flatMap((item) => ('debian' in item.file ? [/^Debian package ([a-z0-9.+-]+):/.exec(item.source)![1]!] : []))),
];

/**
 * The folder holding the bundled files (libs/assets/stock/files): found from this file's location
 * in the sources (libs/assets/src) or in the build (dist/libs/assets/src).
 */
export function stockFilesDir(): string {
  return repoFolder(import.meta.url, 'libs/assets/stock/files', 'stock/files');
}
