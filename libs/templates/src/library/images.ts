import type { LibrarySeed } from '../templates.service.js';
import { seeded } from '#libs/core';
import { circle, f, image, rect, richText, scrim, stock, svgLayer, track, type View } from './build.js';

/** Still templates of the shared library (png, jpeg, pdf). Every clip starts at 0: a still is the first frame. */
export function imageSeeds(): LibrarySeed[] {
  return [socialPost(), quoteCard(), eventBanner(), productCard(), certificate(), ogImage(), youtubeThumbnail(), saleAnnouncement(), storyAnnouncement(), speakerCard()];
}

function socialPost(): LibrarySeed {
  const v: View = { width: 1080, height: 1080 };
  return {
    id: 'tpl_lib_social_post',
    name: 'Bold social post',
    description: 'A square feed post: a big headline over your picture, with a brand line and an accent bar.',
    categoryId: 'social-media',
    subcategoryId: 'post',
    tags: ['instagram', 'linkedin', 'post', 'square', 'announcement'],
    fieldGroups: ['Text', 'Style', 'Media'],
    fields: [
      f.text('HEADLINE', 'Headline', 'Launch day is finally here', 60, { required: true }),
      f.text('SUBHEADLINE', 'Supporting line', 'Everything you asked for, in one beautifully simple app.', 120),
      f.text('BRAND_NAME', 'Brand name', 'Northwind Studio', 30),
      f.color('ACCENT_COLOR', 'Accent colour', '#f472b6'),
      f.image('BACKGROUND_IMAGE', 'Background picture', stock('bg-aurora'), { config: { aspectRatio: '1:1' } }),
    ],
    edit: {
      timeline: {
        background: '#0f1029',
        tracks: [
          track(richText(v, { x: 80, y: 80, w: 700, h: 50 }, '{{BRAND_NAME}}', { size: 28, weight: 600, letterSpacing: 4, transform: 'uppercase' })),
          track(rect(v, { x: 80, y: 470, w: 120, h: 10 }, '{{ACCENT_COLOR}}', { radius: 5 })),
          track(richText(v, { x: 80, y: 500, w: 920, h: 350 }, '{{HEADLINE}}', { size: 84, weight: 800, lineHeight: 1.05, valign: 'bottom' })),
          track(richText(v, { x: 80, y: 900, w: 920, h: 110 }, '{{SUBHEADLINE}}', { size: 34, color: '#e5e7eb', lineHeight: 1.3 })),
          track(svgLayer(scrim(v, { toward: 'down', from: 0.3, to: 1, opacity: 0.8 }))),
          track(image(v, '{{BACKGROUND_IMAGE}}', null)),
        ],
      },
      output: { format: 'png', size: { width: 1080, height: 1080 } },
    },
  };
}

function quoteCard(): LibrarySeed {
  const v: View = { width: 1080, height: 1350 };
  return {
    id: 'tpl_lib_quote_card',
    name: 'Quote card',
    description: 'A portrait quote card for testimonials and thought leadership, with the author\'s photo and role.',
    categoryId: 'social-media',
    subcategoryId: 'quote',
    tags: ['quote', 'testimonial', 'portrait', 'instagram', 'linkedin'],
    fieldGroups: ['Text', 'Style', 'Media'],
    fields: [
      f.text('QUOTE', 'Quote', 'Ship the small thing today. The perfect thing never leaves the whiteboard.', 220, { required: true, config: { multiline: true } }),
      f.text('AUTHOR', 'Author', 'Ada Moreno', 60),
      f.text('AUTHOR_ROLE', 'Author\'s role', 'Founder, Lumen Labs', 80),
      f.image('AUTHOR_PHOTO', 'Author\'s photo', stock('avatar-portrait'), { config: { aspectRatio: '1:1' } }),
      f.color('BACKGROUND_COLOR', 'Background colour', '#fdf6ec'),
      f.color('ACCENT_COLOR', 'Accent colour', '#f97316'),
      f.color('TEXT_COLOR', 'Text colour', '#1f2937'),
    ],
    edit: {
      timeline: {
        background: '{{BACKGROUND_COLOR}}',
        tracks: [
          track(richText(v, { x: 80, y: 40, w: 300, h: 300 }, '\u201c', { family: 'Noto Serif', size: 340, weight: 700, color: '{{ACCENT_COLOR}}', lineHeight: 1 })),
          track(richText(v, { x: 80, y: 320, w: 920, h: 640 }, '{{QUOTE}}', { family: 'Noto Serif', size: 58, color: '{{TEXT_COLOR}}', lineHeight: 1.3 })),
          track(rect(v, { x: 80, y: 1010, w: 90, h: 8 }, '{{ACCENT_COLOR}}', { radius: 4 })),
          track(image(v, '{{AUTHOR_PHOTO}}', { x: 80, y: 1070, w: 170, h: 170 })),
          track(richText(v, { x: 280, y: 1090, w: 720, h: 60 }, '{{AUTHOR}}', { size: 42, weight: 700, color: '{{TEXT_COLOR}}' })),
          track(richText(v, { x: 280, y: 1158, w: 720, h: 50 }, '{{AUTHOR_ROLE}}', { size: 30, color: '#6b7280' })),
        ],
      },
      output: { format: 'png', size: { width: 1080, height: 1350 } },
    },
  };
}

function eventBanner(): LibrarySeed {
  const v: View = { width: 1600, height: 900 };
  return {
    id: 'tpl_lib_event_banner',
    name: 'Event banner',
    description: 'A wide banner for conferences, meetups and webinars: date pill, event name, venue and a call to action.',
    categoryId: 'events',
    subcategoryId: 'banner',
    tags: ['event', 'conference', 'webinar', 'meetup', 'banner', 'linkedin'],
    fieldGroups: ['Text', 'Style', 'Media'],
    fields: [
      f.text('EVENT_NAME', 'Event name', 'Future of Design Summit', 48, { required: true }),
      f.text('TAGLINE', 'Tagline', 'Two days of talks, workshops and people who make things.', 110),
      f.text('DATE_TEXT', 'Date', 'June 12–13, 2026', 32),
      f.text('LOCATION', 'Venue', 'Harbour Hall, Lisbon · and online', 60),
      f.text('CTA_TEXT', 'Button text', 'Get your ticket', 24),
      f.color('ACCENT_COLOR', 'Accent colour', '#f97316'),
      f.image('BACKGROUND_IMAGE', 'Background picture', stock('bg-sunset-waves'), { config: { aspectRatio: '16:9' } }),
    ],
    edit: {
      timeline: {
        background: '#1e1b4b',
        tracks: [
          track(richText(v, { x: 100, y: 130, w: 420, h: 64 }, '{{DATE_TEXT}}', {
            size: 26, weight: 700, letterSpacing: 2, transform: 'uppercase', align: 'center', valign: 'middle', background: { color: '{{ACCENT_COLOR}}', borderRadius: 32 },
          })),
          track(richText(v, { x: 100, y: 220, w: 1050, h: 300 }, '{{EVENT_NAME}}', { size: 104, weight: 800, lineHeight: 1.02, valign: 'middle' })),
          track(richText(v, { x: 100, y: 530, w: 900, h: 110 }, '{{TAGLINE}}', { size: 36, color: '#f3f4f6', lineHeight: 1.3 })),
          track(richText(v, { x: 100, y: 660, w: 900, h: 50 }, '{{LOCATION}}', { size: 30, weight: 600, color: '#fde68a' })),
          track(richText(v, { x: 100, y: 740, w: 380, h: 84 }, '{{CTA_TEXT}}', {
            size: 30, weight: 700, color: '#111827', align: 'center', valign: 'middle', background: { color: '#ffffff', borderRadius: 42 },
          })),
          track(svgLayer(scrim(v, { toward: 'left', from: 0.2, to: 0.85, opacity: 0.85 }))),
          track(image(v, '{{BACKGROUND_IMAGE}}', null)),
        ],
      },
      output: { format: 'png', size: { width: 1600, height: 900 } },
    },
  };
}

function productCard(): LibrarySeed {
  const v: View = { width: 1080, height: 1350 };
  return {
    id: 'tpl_lib_product_card',
    name: 'Product card',
    description: 'A catalogue card for one product: photo, badge, name, short description, price and the old price struck through.',
    categoryId: 'ecommerce',
    subcategoryId: 'product',
    tags: ['product', 'shop', 'catalogue', 'price', 'ecommerce'],
    fieldGroups: ['Text', 'Style', 'Media'],
    fields: [
      f.text('PRODUCT_NAME', 'Product name', 'Everyday Stoneware Mug', 40, { required: true }),
      f.text('DESCRIPTION', 'Description', 'Hand-glazed, 350 ml, dishwasher safe', 70),
      f.text('PRICE', 'Price', '$24', 12, { required: true }),
      f.text('OLD_PRICE', 'Old price (struck through)', '$32', 12),
      f.text('BADGE_TEXT', 'Badge', 'New', 12),
      f.color('BRAND_COLOR', 'Brand colour', '#ea580c'),
      f.color('BACKGROUND_COLOR', 'Background colour', '#fafaf9'),
      f.image('PRODUCT_IMAGE', 'Product photo (transparent PNG works best)', stock('product-mug'), { config: { aspectRatio: '1:1' } }),
    ],
    edit: {
      timeline: {
        background: '{{BACKGROUND_COLOR}}',
        tracks: [
          track(richText(v, { x: 80, y: 80, w: 200, h: 64 }, '{{BADGE_TEXT}}', {
            size: 28, weight: 700, letterSpacing: 2, transform: 'uppercase', align: 'center', valign: 'middle', background: { color: '{{BRAND_COLOR}}', borderRadius: 32 },
          })),
          track(image(v, '{{PRODUCT_IMAGE}}', { x: 170, y: 120, w: 740, h: 740 }, 'contain')),
          track(circle(v, 540, 500, 390, '{{BRAND_COLOR}}', 0.12)),
          track(richText(v, { x: 80, y: 930, w: 920, h: 130 }, '{{PRODUCT_NAME}}', { size: 62, weight: 700, color: '#1c1917', lineHeight: 1.05, valign: 'bottom' })),
          track(richText(v, { x: 80, y: 1075, w: 920, h: 50 }, '{{DESCRIPTION}}', { size: 30, color: '#57534e' })),
          track(richText(v, { x: 80, y: 1140, w: 400, h: 50 }, '{{OLD_PRICE}}', { size: 36, color: '#a8a29e', decoration: 'line-through', valign: 'middle' })),
          track(richText(v, { x: 80, y: 1190, w: 600, h: 100 }, '{{PRICE}}', { size: 84, weight: 800, color: '{{BRAND_COLOR}}', valign: 'middle' })),
        ],
      },
      output: { format: 'png', size: { width: 1080, height: 1350 } },
    },
  };
}

/** A4 landscape at 96 dpi. */
function certificate(): LibrarySeed {
  const v: View = { width: 1123, height: 794 };
  const border = `<svg xmlns="http://www.w3.org/2000/svg" width="1123" height="794" viewBox="0 0 1123 794">`
    + `<rect x="24" y="24" width="1075" height="746" fill="none" stroke="#b8860b" stroke-width="6"/>`
    + `<rect x="40" y="40" width="1043" height="714" fill="none" stroke="#1e3a8a" stroke-width="2"/>`
    + ['M40 100 L40 40 L100 40', 'M1023 40 L1083 40 L1083 100', 'M1083 694 L1083 754 L1023 754', 'M100 754 L40 754 L40 694']
      .map((d) => `<path d="${d}" fill="none" stroke="#b8860b" stroke-width="10"/>`).join('')
    + `</svg>`;
  const serif = 'Noto Serif';
  return {
    id: 'tpl_lib_certificate',
    name: 'Certificate of completion (PDF)',
    description: 'A printable A4 landscape certificate with a gold seal: recipient, course, date and signature lines. Renders as PDF.',
    categoryId: 'documents',
    subcategoryId: 'certificate',
    tags: ['certificate', 'course', 'education', 'pdf', 'print', 'award'],
    fieldGroups: ['Text', 'Style'],
    fields: [
      f.text('RECIPIENT_NAME', 'Recipient', null, 48, { required: true, placeholder: 'Jordan Lee' }),
      f.text('COURSE_NAME', 'Course', null, 90, { required: true, placeholder: 'Introduction to Motion Design' }),
      f.text('CERTIFICATE_TITLE', 'Title', 'Certificate of Completion', 40),
      f.text('DATE_TEXT', 'Date', 'March 14, 2026', 30),
      f.text('SIGNER_NAME', 'Signed by', 'Dr. Maya Okafor', 40),
      f.text('SIGNER_TITLE', 'Signer\'s title', 'Head of Learning', 50),
      f.text('ISSUER_NAME', 'Issuer', 'Northwind Academy', 50),
      f.color('ACCENT_COLOR', 'Name colour', '#1e3a8a'),
    ],
    edit: {
      timeline: {
        background: '#fffdf7',
        tracks: [
          track(richText(v, { x: 111, y: 100, w: 900, h: 70 }, '{{CERTIFICATE_TITLE}}', { family: serif, size: 46, weight: 700, color: '#1e3a8a', letterSpacing: 6, transform: 'uppercase', align: 'center', valign: 'middle' })),
          track(richText(v, { x: 111, y: 185, w: 900, h: 40 }, 'This certificate is proudly presented to', { family: serif, size: 24, color: '#6b7280', align: 'center', valign: 'middle' })),
          track(richText(v, { x: 111, y: 235, w: 900, h: 110 }, '{{RECIPIENT_NAME}}', { family: serif, size: 72, weight: 700, color: '{{ACCENT_COLOR}}', align: 'center', valign: 'middle' })),
          track(rect(v, { x: 261, y: 355, w: 600, h: 3 }, '#b8860b')),
          track(richText(v, { x: 131, y: 380, w: 860, h: 100 }, 'for successfully completing {{COURSE_NAME}}', { family: serif, size: 28, color: '#374151', lineHeight: 1.35, align: 'center', valign: 'top' })),
          track(image(v, stock('seal-gold'), { x: 476, y: 510, w: 170, h: 170 }, 'contain')),
          track(richText(v, { x: 140, y: 560, w: 300, h: 44 }, '{{DATE_TEXT}}', { family: serif, size: 26, color: '#111827', align: 'center', valign: 'bottom' })),
          track(rect(v, { x: 140, y: 612, w: 300, h: 2 }, '#374151')),
          track(richText(v, { x: 140, y: 620, w: 300, h: 36 }, 'Date', { size: 20, color: '#6b7280', align: 'center' })),
          track(richText(v, { x: 683, y: 560, w: 300, h: 44 }, '{{SIGNER_NAME}}', { family: serif, size: 26, color: '#111827', align: 'center', valign: 'bottom' })),
          track(rect(v, { x: 683, y: 612, w: 300, h: 2 }, '#374151')),
          track(richText(v, { x: 683, y: 620, w: 300, h: 36 }, '{{SIGNER_TITLE}}', { size: 20, color: '#6b7280', align: 'center' })),
          track(richText(v, { x: 211, y: 700, w: 700, h: 36 }, 'Issued by {{ISSUER_NAME}}', { size: 18, color: '#9ca3af', letterSpacing: 2, transform: 'uppercase', align: 'center' })),
          track(svgLayer(border)),
        ],
      },
      output: { format: 'pdf', size: { width: 1123, height: 794 } },
    },
  };
}

function ogImage(): LibrarySeed {
  const v: View = { width: 1200, height: 630 };
  return {
    id: 'tpl_lib_og_image',
    name: 'Open Graph image (1200×630)',
    description: 'The link preview for blog posts and docs pages: title, site, author and reading time, sized for every network\'s link cards.',
    categoryId: 'web',
    subcategoryId: 'og-image',
    tags: ['og', 'open graph', 'blog', 'link preview', 'twitter card', 'seo'],
    fieldGroups: ['Text', 'Style', 'Media'],
    fields: [
      f.text('TITLE', 'Title', 'How we cut our image pipeline from 9 seconds to 90 milliseconds', 90, { required: true }),
      f.text('SITE_NAME', 'Site name', 'northwind.dev/blog', 40),
      f.text('AUTHOR', 'Author', 'Sam Rivera', 40),
      f.text('READING_TIME', 'Reading time', '6 min read', 20),
      f.color('ACCENT_COLOR', 'Accent colour', '#22d3ee'),
      f.image('LOGO', 'Logo (square)', stock('logo-mark'), { config: { aspectRatio: '1:1' } }),
      f.image('BACKGROUND_IMAGE', 'Background picture', stock('bg-mesh-dark')),
    ],
    edit: {
      timeline: {
        background: '#0b1020',
        tracks: [
          track(image(v, '{{LOGO}}', { x: 80, y: 64, w: 72, h: 72 }, 'contain')),
          track(richText(v, { x: 170, y: 64, w: 700, h: 72 }, '{{SITE_NAME}}', { size: 30, weight: 600, color: '#e5e7eb', valign: 'middle' })),
          track(richText(v, { x: 80, y: 180, w: 1020, h: 280 }, '{{TITLE}}', { size: 64, weight: 800, lineHeight: 1.12, valign: 'middle' })),
          track(richText(v, { x: 80, y: 500, w: 900, h: 44 }, '{{AUTHOR}}  ·  {{READING_TIME}}', { size: 28, weight: 600, color: '{{ACCENT_COLOR}}', valign: 'middle' })),
          track(rect(v, { x: 0, y: 618, w: 1200, h: 12 }, '{{ACCENT_COLOR}}')),
          track(image(v, '{{BACKGROUND_IMAGE}}', null)),
        ],
      },
      output: { format: 'png', size: { width: 1200, height: 630 } },
    },
  };
}

function youtubeThumbnail(): LibrarySeed {
  const v: View = { width: 1280, height: 720 };
  return {
    id: 'tpl_lib_youtube_thumbnail',
    name: 'YouTube thumbnail',
    description: 'A loud 1280×720 thumbnail: a highlight tag, a huge title with a shadow, the episode number and your picture behind.',
    categoryId: 'web',
    subcategoryId: 'thumbnail',
    tags: ['youtube', 'thumbnail', 'video', 'creator', 'podcast'],
    fieldGroups: ['Text', 'Style', 'Media'],
    fields: [
      f.text('TITLE', 'Title', 'I hiked 100 km in 3 days', 40, { required: true }),
      f.text('HIGHLIGHT', 'Highlight tag', 'No car', 16),
      f.text('EPISODE', 'Episode', 'Ep. 12', 10),
      f.color('ACCENT_COLOR', 'Tag colour', '#facc15'),
      f.image('PHOTO', 'Picture', stock('photo-mountains'), { config: { aspectRatio: '16:9' } }),
    ],
    edit: {
      timeline: {
        background: '#000000',
        tracks: [
          track(richText(v, { x: 60, y: 110, w: 420, h: 100 }, '{{HIGHLIGHT}}', {
            size: 60, weight: 800, color: '#111827', transform: 'uppercase', align: 'center', valign: 'middle', background: { color: '{{ACCENT_COLOR}}', borderRadius: 14 },
          })),
          track(richText(v, { x: 60, y: 250, w: 800, h: 400 }, '{{TITLE}}', {
            size: 104, weight: 800, lineHeight: 1, transform: 'uppercase', valign: 'top', shadow: { offsetX: 0, offsetY: 8, blur: 24, color: '#000000', opacity: 0.7 },
          })),
          track(richText(v, { x: 1040, y: 610, w: 200, h: 70 }, '{{EPISODE}}', {
            size: 34, weight: 700, align: 'center', valign: 'middle', background: { color: '#000000', opacity: 0.6, borderRadius: 12 },
          })),
          track(svgLayer(scrim(v, { toward: 'left', from: 0.25, to: 0.9, opacity: 0.85 }))),
          track(image(v, '{{PHOTO}}', null)),
        ],
      },
      output: { format: 'jpeg', size: { width: 1280, height: 720 }, quality: 'high' },
    },
  };
}

/** Confetti scattered over the frame, drawn once from a fixed seed. */
function confetti(v: View): string {
  const rnd = seeded(2026);
  const colors = ['#f472b6', '#facc15', '#34d399', '#60a5fa', '#f97316', '#a78bfa'];
  let pieces = '';
  for (let i = 0; i < 90; i++) {
    const x = Math.round(rnd() * v.width);
    const y = Math.round(rnd() * v.height);
    // Keep the middle band clear for the discount.
    if (y > 250 && y < 830 && x > 120 && x < 960) continue;
    const color = colors[i % colors.length];
    const angle = Math.round(rnd() * 180);
    pieces += rnd() < 0.5
      ? `<rect x="${x}" y="${y}" width="${10 + Math.round(rnd() * 14)}" height="${6 + Math.round(rnd() * 6)}" fill="${color}" transform="rotate(${angle} ${x} ${y})"/>`
      : `<circle cx="${x}" cy="${y}" r="${4 + Math.round(rnd() * 6)}" fill="${color}"/>`;
  }
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${v.width}" height="${v.height}" viewBox="0 0 ${v.width} ${v.height}">${pieces}</svg>`;
}

function saleAnnouncement(): LibrarySeed {
  const v: View = { width: 1080, height: 1080 };
  return {
    id: 'tpl_lib_sale_announcement',
    name: 'Sale announcement',
    description: 'A confetti sale post: the season, a giant discount, a promo code in a dashed box and the end date.',
    categoryId: 'marketing',
    subcategoryId: 'sale',
    tags: ['sale', 'discount', 'promo code', 'black friday', 'square'],
    fieldGroups: ['Text', 'Style'],
    fields: [
      f.text('SALE_TITLE', 'Sale name', 'Summer sale', 24),
      f.text('DISCOUNT', 'Discount', '50%', 6, { required: true }),
      f.text('SUBTITLE', 'Under the discount', 'off everything in store', 40),
      f.text('PROMO_CODE', 'Promo code', 'SUNNY50', 16),
      f.text('END_DATE', 'Ends', 'Sunday at midnight', 30),
      f.color('ACCENT_COLOR', 'Discount colour', '#facc15'),
      f.color('BACKGROUND_COLOR', 'Background colour', '#111827'),
    ],
    edit: {
      timeline: {
        background: '{{BACKGROUND_COLOR}}',
        tracks: [
          track(richText(v, { x: 90, y: 150, w: 900, h: 100 }, '{{SALE_TITLE}}', { size: 64, weight: 800, letterSpacing: 10, transform: 'uppercase', align: 'center', valign: 'middle' })),
          track(richText(v, { x: 40, y: 260, w: 1000, h: 320 }, '{{DISCOUNT}}', { family: 'Roboto', size: 280, weight: 900, color: '{{ACCENT_COLOR}}', align: 'center', valign: 'middle', lineHeight: 1 })),
          track(richText(v, { x: 90, y: 590, w: 900, h: 70 }, '{{SUBTITLE}}', { size: 44, weight: 600, color: '#f9fafb', align: 'center', valign: 'middle' })),
          track(richText(v, { x: 240, y: 700, w: 600, h: 100 }, 'Use code {{PROMO_CODE}}', {
            size: 40, weight: 700, align: 'center', valign: 'middle', border: { width: 4, color: '#ffffff', radius: 18 },
          })),
          track(richText(v, { x: 90, y: 850, w: 900, h: 50 }, 'Ends {{END_DATE}}', { size: 30, color: '#9ca3af', align: 'center', valign: 'middle' })),
          track(svgLayer(confetti(v))),
        ],
      },
      output: { format: 'png', size: { width: 1080, height: 1080 } },
    },
  };
}

function storyAnnouncement(): LibrarySeed {
  const v: View = { width: 1080, height: 1920 };
  return {
    id: 'tpl_lib_story_announcement',
    name: 'Story announcement',
    description: 'A full-screen 9:16 story: kicker, headline and a call-to-action button over a picture.',
    categoryId: 'social-media',
    subcategoryId: 'story',
    tags: ['story', 'reel', 'instagram', 'tiktok', 'vertical', 'announcement'],
    fieldGroups: ['Text', 'Style', 'Media'],
    fields: [
      f.text('KICKER', 'Kicker', 'Coming soon', 24),
      f.text('HEADLINE', 'Headline', 'Our new city studio opens its doors', 70, { required: true }),
      f.text('CTA_TEXT', 'Button text', 'Tap to RSVP', 24),
      f.color('ACCENT_COLOR', 'Accent colour', '#f472b6'),
      f.image('BACKGROUND_IMAGE', 'Background picture (vertical works best)', stock('photo-city')),
    ],
    edit: {
      timeline: {
        background: '#1e1b4b',
        tracks: [
          track(richText(v, { x: 90, y: 1150, w: 900, h: 60 }, '{{KICKER}}', { size: 36, weight: 700, letterSpacing: 6, transform: 'uppercase', color: '{{ACCENT_COLOR}}' })),
          track(richText(v, { x: 90, y: 1220, w: 900, h: 400 }, '{{HEADLINE}}', { size: 96, weight: 800, lineHeight: 1.05 })),
          track(richText(v, { x: 90, y: 1680, w: 520, h: 110 }, '{{CTA_TEXT}}', {
            size: 40, weight: 700, color: '#111827', align: 'center', valign: 'middle', background: { color: '#ffffff', borderRadius: 55 },
          })),
          track(svgLayer(scrim(v, { toward: 'down', from: 0.3, to: 0.75, opacity: 0.9 }))),
          track(image(v, '{{BACKGROUND_IMAGE}}', null)),
        ],
      },
      output: { format: 'png', size: { width: 1080, height: 1920 } },
    },
  };
}

function speakerCard(): LibrarySeed {
  const v: View = { width: 1080, height: 1080 };
  return {
    id: 'tpl_lib_speaker_card',
    name: 'Speaker card',
    description: 'Announce a speaker: photo with an accent frame, name, role, talk title and the time slot.',
    categoryId: 'events',
    subcategoryId: 'speaker',
    tags: ['speaker', 'conference', 'event', 'lineup', 'square'],
    fieldGroups: ['Text', 'Style', 'Media'],
    fields: [
      f.text('EVENT_NAME', 'Event', 'Future of Design Summit', 40),
      f.text('SPEAKER_NAME', 'Speaker', 'Ada Moreno', 40, { required: true }),
      f.text('SPEAKER_ROLE', 'Role', 'Founder, Lumen Labs', 60),
      f.text('TALK_TITLE', 'Talk title', 'Designing for the second click', 80),
      f.text('DATE_TEXT', 'Day', 'June 12', 24),
      f.text('TIME_TEXT', 'Time', '10:30 · Main stage', 30),
      f.color('ACCENT_COLOR', 'Accent colour', '#22d3ee'),
      f.color('BACKGROUND_COLOR', 'Background colour', '#0f172a'),
      f.image('SPEAKER_PHOTO', 'Speaker photo (square)', stock('avatar-portrait'), { config: { aspectRatio: '1:1' } }),
    ],
    edit: {
      timeline: {
        background: '{{BACKGROUND_COLOR}}',
        tracks: [
          track(richText(v, { x: 80, y: 80, w: 920, h: 56 }, '{{EVENT_NAME}}', { size: 30, weight: 700, letterSpacing: 4, transform: 'uppercase', color: '{{ACCENT_COLOR}}' })),
          track(image(v, '{{SPEAKER_PHOTO}}', { x: 80, y: 300, w: 420, h: 420 })),
          track(rect(v, { x: 110, y: 330, w: 420, h: 420 }, '{{ACCENT_COLOR}}')),
          track(richText(v, { x: 560, y: 300, w: 460, h: 150 }, '{{SPEAKER_NAME}}', { size: 60, weight: 800, lineHeight: 1.05, valign: 'bottom' })),
          track(richText(v, { x: 560, y: 465, w: 460, h: 90 }, '{{SPEAKER_ROLE}}', { size: 30, color: '#94a3b8', lineHeight: 1.25 })),
          track(richText(v, { x: 560, y: 570, w: 460, h: 180 }, '\u201c{{TALK_TITLE}}\u201d', { size: 38, weight: 600, color: '#f8fafc', lineHeight: 1.25 })),
          track(rect(v, { x: 80, y: 840, w: 920, h: 2 }, '#334155')),
          track(richText(v, { x: 80, y: 880, w: 920, h: 60 }, '{{DATE_TEXT}}  ·  {{TIME_TEXT}}', { size: 34, weight: 600, valign: 'middle' })),
        ],
      },
      output: { format: 'png', size: { width: 1080, height: 1080 } },
    },
  };
}
