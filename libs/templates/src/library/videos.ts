import type { LibrarySeed } from '../templates.service.js';
import { circle, f, image, rect, richText, scrim, stock, svgLayer, track, type Obj, type View } from './build.js';

/** Video templates of the shared library (mp4); they render once the video engine lands. */
export function videoSeeds(): LibrarySeed[] {
  return [logoIntro(), lowerThird(), productPromo(), countdown(), photoSlideshow(), endCard()];
}

const HD: View = { width: 1280, height: 720 };
const mp4 = (v: View) => ({ format: 'mp4', size: { width: v.width, height: v.height }, fps: 25 });

function logoIntro(): LibrarySeed {
  const v = HD;
  return {
    id: 'tpl_lib_video_logo_intro',
    name: 'Logo intro (5 s)',
    description: 'A five-second opener: your logo zooms in, the title slides up, the tagline fades in over a slowly moving background.',
    categoryId: 'video-branding',
    subcategoryId: 'intro',
    tags: ['intro', 'logo', 'opener', 'youtube', 'brand'],
    fieldGroups: ['Text', 'Media'],
    fields: [
      f.text('TITLE', 'Title', 'Northwind Studio', 32, { required: true }),
      f.text('TAGLINE', 'Tagline', 'Stories worth watching', 48),
      f.image('LOGO', 'Logo (square, transparent PNG)', stock('logo-mark'), { config: { aspectRatio: '1:1' } }),
      f.image('BACKGROUND_IMAGE', 'Background picture', stock('bg-sunset-waves'), { config: { aspectRatio: '16:9' } }),
    ],
    edit: {
      timeline: {
        background: '#0f0a2e',
        tracks: [
          track(richText(v, { x: 190, y: 470, w: 900, h: 60 }, '{{TAGLINE}}', { size: 30, color: '#fde68a', align: 'center', valign: 'middle', letterSpacing: 3, animation: { preset: 'fadeIn', duration: 1 } }, { start: 1.8, length: 3.2, transition: { out: 'fade' } })),
          track(richText(v, { x: 140, y: 360, w: 1000, h: 110 }, '{{TITLE}}', { size: 84, weight: 800, align: 'center', valign: 'middle', animation: { preset: 'slideIn', duration: 0.8, direction: 'up' } }, { start: 1, length: 4, transition: { out: 'fade' } })),
          track(image(v, '{{LOGO}}', { x: 550, y: 160, w: 180, h: 180 }, 'contain', { start: 0.3, length: 4.7, transition: { in: 'zoom', out: 'fade' } })),
          track(svgLayer(scrim(v, { toward: 'down', from: 0, to: 1, opacity: 0.45 }), { length: 5 })),
          track(image(v, '{{BACKGROUND_IMAGE}}', null, 'crop', { length: 5, effect: 'zoomInSlow', transition: { in: 'fade', out: 'fade' } })),
        ],
      },
      output: mp4(v),
    },
  };
}

function lowerThird(): LibrarySeed {
  const v = HD;
  return {
    id: 'tpl_lib_video_lower_third',
    name: 'Lower third (name and title)',
    description: 'Introduce the person on screen: a bar wipes in, the name and title slide in beside it and leave after six seconds.',
    categoryId: 'video-branding',
    subcategoryId: 'lower-third',
    tags: ['lower third', 'interview', 'name tag', 'broadcast', 'caption'],
    fieldGroups: ['Text', 'Style', 'Media'],
    fields: [
      f.text('NAME', 'Name', 'Ada Moreno', 32, { required: true }),
      f.text('TITLE', 'Title', 'Founder, Lumen Labs', 48),
      f.color('ACCENT_COLOR', 'Bar colour', '#f472b6'),
      f.image('BACKGROUND_IMAGE', 'Footage still', stock('photo-city'), { config: { aspectRatio: '16:9' } }),
    ],
    edit: {
      timeline: {
        background: '#000000',
        tracks: [
          track(richText(v, { x: 112, y: 585, w: 640, h: 44 }, '{{TITLE}}', { size: 26, color: '#e5e7eb', valign: 'middle' }, { start: 1.1, length: 5.4, transition: { in: 'slideRight', out: 'fade' } })),
          track(richText(v, { x: 112, y: 525, w: 640, h: 60 }, '{{NAME}}', { size: 42, weight: 700, valign: 'middle' }, { start: 0.9, length: 5.6, transition: { in: 'slideRight', out: 'fade' } })),
          track(rect(v, { x: 80, y: 520, w: 12, h: 116 }, '{{ACCENT_COLOR}}', {}, { start: 0.6, length: 6, transition: { in: 'wipeRight', out: 'fade' } })),
          track(rect(v, { x: 80, y: 510, w: 700, h: 136 }, '#000000', { opacity: 0.6, radius: 6 }, { start: 0.6, length: 6, transition: { in: 'wipeRight', out: 'wipeLeft' } })),
          track(image(v, '{{BACKGROUND_IMAGE}}', null, 'crop', { length: 8, effect: 'zoomInSlow' })),
        ],
      },
      output: mp4(v),
    },
  };
}

function productPromo(): LibrarySeed {
  const v: View = { width: 1080, height: 1080 };
  return {
    id: 'tpl_lib_video_product_promo',
    name: 'Product promo (9 s, square)',
    description: 'Three beats for a feed ad: the hook, the product with its price, then the call to action and your address.',
    categoryId: 'marketing',
    subcategoryId: 'promo',
    tags: ['promo', 'ad', 'product', 'square', 'instagram', 'facebook'],
    fieldGroups: ['Text', 'Style', 'Media'],
    fields: [
      f.text('HEADLINE_1', 'Hook', 'Meet your new morning ritual', 40, { required: true }),
      f.text('HEADLINE_2', 'Product line', 'Hand-glazed. Built to last.', 40),
      f.text('PRICE', 'Price tag', 'Only $24', 16),
      f.text('CTA_TEXT', 'Call to action', 'Shop now', 20),
      f.text('WEBSITE', 'Website', 'northwind.shop', 32),
      f.color('BRAND_COLOR', 'Brand colour', '#ea580c'),
      f.color('BACKGROUND_COLOR', 'Background colour', '#fff7ed'),
      f.image('PRODUCT_IMAGE', 'Product photo (transparent PNG works best)', stock('product-mug'), { config: { aspectRatio: '1:1' } }),
    ],
    edit: {
      timeline: {
        background: '{{BACKGROUND_COLOR}}',
        tracks: [
          track(
            richText(v, { x: 90, y: 380, w: 900, h: 160 }, '{{CTA_TEXT}}', { size: 96, weight: 800, color: '{{BRAND_COLOR}}', align: 'center', valign: 'middle', animation: { preset: 'ascend', duration: 0.8 } }, { start: 6, length: 3 }),
          ),
          track(richText(v, { x: 90, y: 560, w: 900, h: 60 }, '{{WEBSITE}}', { size: 36, weight: 600, color: '#44403c', align: 'center', valign: 'middle' }, { start: 6.5, length: 2.5, transition: { in: 'fade' } })),
          track(richText(v, { x: 700, y: 720, w: 300, h: 100 }, '{{PRICE}}', {
            size: 40, weight: 800, align: 'center', valign: 'middle', background: { color: '{{BRAND_COLOR}}', borderRadius: 50 },
          }, { start: 3.6, length: 2.4, transition: { in: 'zoom', out: 'fade' } })),
          track(
            richText(v, { x: 90, y: 90, w: 900, h: 200 }, '{{HEADLINE_1}}', { size: 72, weight: 800, color: '#1c1917', align: 'center', valign: 'middle', lineHeight: 1.05 }, { start: 0.2, length: 2.8, transition: { in: 'slideUp', out: 'fade' } }),
            richText(v, { x: 90, y: 90, w: 900, h: 200 }, '{{HEADLINE_2}}', { size: 64, weight: 700, color: '#1c1917', align: 'center', valign: 'middle', lineHeight: 1.05 }, { start: 3, length: 3, transition: { in: 'fade', out: 'fade' } }),
          ),
          track(image(v, '{{PRODUCT_IMAGE}}', { x: 190, y: 300, w: 700, h: 700 }, 'contain', { start: 0.4, length: 5.6, effect: 'zoomInSlow', transition: { in: 'zoom', out: 'fade' } })),
          track(circle(v, 540, 650, 360, '{{BRAND_COLOR}}', 0.12, { length: 6, transition: { out: 'fade' } })),
        ],
      },
      output: mp4(v),
    },
  };
}

function countdown(): LibrarySeed {
  const v: View = { width: 1080, height: 1920 };
  const ring = `<svg xmlns="http://www.w3.org/2000/svg" width="1080" height="1920" viewBox="0 0 1080 1920">`
    + `<circle cx="540" cy="960" r="330" fill="none" stroke="#ffffff" stroke-opacity="0.15" stroke-width="24"/>`
    + `<circle cx="540" cy="960" r="380" fill="none" stroke="#ffffff" stroke-opacity="0.06" stroke-width="4"/></svg>`;
  const digits: Obj[] = [5, 4, 3, 2, 1].map((n, i) =>
    richText(v, { x: 240, y: 760, w: 600, h: 400 }, String(n), { family: 'Roboto', size: 360, weight: 900, color: '{{ACCENT_COLOR}}', align: 'center', valign: 'middle', lineHeight: 1 }, { start: i, length: 1, transition: { in: 'zoom' } }),
  );
  return {
    id: 'tpl_lib_video_countdown',
    name: 'Countdown (vertical)',
    description: 'A 9:16 five-second countdown for stories and reels, ending on your launch line.',
    categoryId: 'events',
    subcategoryId: 'countdown',
    tags: ['countdown', 'launch', 'story', 'reel', 'vertical', 'live'],
    fieldGroups: ['Text', 'Style'],
    fields: [
      f.text('EVENT_NAME', 'Above the numbers', 'The drop goes live in', 40, { required: true }),
      f.text('FINAL_TEXT', 'Final line', 'We\'re live!', 24),
      f.color('ACCENT_COLOR', 'Number colour', '#facc15'),
      f.color('BACKGROUND_COLOR', 'Background colour', '#111827'),
    ],
    edit: {
      timeline: {
        background: '{{BACKGROUND_COLOR}}',
        tracks: [
          track(richText(v, { x: 90, y: 420, w: 900, h: 200 }, '{{EVENT_NAME}}', { size: 72, weight: 700, align: 'center', valign: 'middle', lineHeight: 1.1 }, { length: 5, transition: { in: 'fade', out: 'fade' } })),
          track(
            ...digits,
            richText(v, { x: 90, y: 760, w: 900, h: 400 }, '{{FINAL_TEXT}}', { size: 120, weight: 800, color: '{{ACCENT_COLOR}}', align: 'center', valign: 'middle', lineHeight: 1.05 }, { start: 5, length: 2, transition: { in: 'zoom' } }),
          ),
          track(svgLayer(ring, { length: 7 })),
        ],
      },
      output: mp4(v),
    },
  };
}

function photoSlideshow(): LibrarySeed {
  const v = HD;
  const caption = (key: string, start: number) =>
    richText(v, { x: 60, y: 580, w: 640, h: 80 }, `{{${key}}}`, {
      size: 36, weight: 700, valign: 'middle', padding: { top: 0, right: 24, bottom: 0, left: 24 }, background: { color: '#000000', opacity: 0.55, borderRadius: 12 },
    }, { start, length: 3, transition: { in: 'slideRight', out: 'fade' } });
  return {
    id: 'tpl_lib_video_slideshow',
    name: 'Photo slideshow (12 s)',
    description: 'Three pictures with slow zooms and pans, cross-fades and a caption on each: trips, listings, recaps.',
    categoryId: 'marketing',
    subcategoryId: 'promo',
    tags: ['slideshow', 'photos', 'travel', 'real estate', 'recap', 'ken burns'],
    fieldGroups: ['Text', 'Media'],
    fields: [
      f.text('CAPTION_1', 'First caption', 'Day 1 · The ridge trail', 40),
      f.text('CAPTION_2', 'Second caption', 'Day 2 · City lights', 40),
      f.text('CAPTION_3', 'Third caption', 'Day 3 · Back to the sea', 40),
      f.image('IMAGE_1', 'First picture', stock('photo-mountains'), { config: { aspectRatio: '16:9' } }),
      f.image('IMAGE_2', 'Second picture', stock('photo-city'), { config: { aspectRatio: '16:9' } }),
      f.image('IMAGE_3', 'Third picture', stock('photo-beach'), { config: { aspectRatio: '16:9' } }),
    ],
    edit: {
      timeline: {
        background: '#000000',
        tracks: [
          track(caption('CAPTION_1', 0.6), caption('CAPTION_2', 4.6), caption('CAPTION_3', 8.6)),
          track(
            image(v, '{{IMAGE_1}}', null, 'crop', { start: 0, length: 4, effect: 'zoomInSlow', transition: { in: 'fade', out: 'fade' } }),
            image(v, '{{IMAGE_2}}', null, 'crop', { start: 4, length: 4, effect: 'slideLeftSlow', transition: { in: 'fade', out: 'fade' } }),
            image(v, '{{IMAGE_3}}', null, 'crop', { start: 8, length: 4, effect: 'zoomOutSlow', transition: { in: 'fade', out: 'fade' } }),
          ),
        ],
      },
      output: mp4(v),
    },
  };
}

function endCard(): LibrarySeed {
  const v = HD;
  return {
    id: 'tpl_lib_video_end_card',
    name: 'End card (6 s)',
    description: 'Close a video: thanks, a subscribe prompt, your website and logo over a dark animated backdrop.',
    categoryId: 'video-branding',
    subcategoryId: 'outro',
    tags: ['outro', 'end screen', 'subscribe', 'youtube', 'brand'],
    fieldGroups: ['Text', 'Style', 'Media'],
    fields: [
      f.text('THANKS_TEXT', 'Headline', 'Thanks for watching', 32, { required: true }),
      f.text('CTA_TEXT', 'Button text', 'Subscribe for more', 28),
      f.text('WEBSITE', 'Website', 'northwind.studio', 32),
      f.color('ACCENT_COLOR', 'Button colour', '#ef4444'),
      f.image('LOGO', 'Logo (square)', stock('logo-mark'), { config: { aspectRatio: '1:1' } }),
      f.image('BACKGROUND_IMAGE', 'Background picture', stock('bg-mesh-dark')),
    ],
    edit: {
      timeline: {
        background: '#0b1020',
        tracks: [
          track(richText(v, { x: 140, y: 200, w: 1000, h: 110 }, '{{THANKS_TEXT}}', { size: 72, weight: 800, align: 'center', valign: 'middle', animation: { preset: 'fadeIn', duration: 0.8 } }, { start: 0.3, length: 5.7, transition: { out: 'fade' } })),
          track(richText(v, { x: 440, y: 350, w: 400, h: 84 }, '{{CTA_TEXT}}', {
            size: 30, weight: 700, align: 'center', valign: 'middle', background: { color: '{{ACCENT_COLOR}}', borderRadius: 42 },
          }, { start: 1, length: 5, transition: { in: 'zoom', out: 'fade' } })),
          track(image(v, '{{LOGO}}', { x: 490, y: 480, w: 80, h: 80 }, 'contain', { start: 1.5, length: 4.5, transition: { in: 'fade', out: 'fade' } })),
          track(richText(v, { x: 580, y: 480, w: 400, h: 80 }, '{{WEBSITE}}', { size: 30, weight: 600, color: '#cbd5e1', valign: 'middle' }, { start: 1.5, length: 4.5, transition: { in: 'fade', out: 'fade' } })),
          track(image(v, '{{BACKGROUND_IMAGE}}', null, 'crop', { length: 6, effect: 'slideRightSlow' })),
        ],
      },
      output: mp4(v),
    },
  };
}
