/**
 * The template categories (contract §7 INVALID_CATEGORY: a main category, and optionally a
 * subcategory of it). A fixed catalogue in code, like the plans: ids are stable slugs that clients
 * may hard-code in `categoryId` filters (docs/decisions.md "Templates").
 */
export interface TemplateSubcategory {
  id: string;
  name: string;
}

export interface TemplateCategory {
  id: string;
  name: string;
  description: string;
  subcategories: readonly TemplateSubcategory[];
}

export const TEMPLATE_CATEGORIES: readonly TemplateCategory[] = [
  {
    id: 'social-media',
    name: 'Social media',
    description: 'Posts, stories and quote cards sized for the feeds',
    subcategories: [
      { id: 'post', name: 'Feed post' },
      { id: 'story', name: 'Story / reel' },
      { id: 'quote', name: 'Quote card' },
      { id: 'announcement', name: 'Announcement' },
    ],
  },
  {
    id: 'marketing',
    name: 'Marketing',
    description: 'Sales, promotions and ads',
    subcategories: [
      { id: 'sale', name: 'Sale and discount' },
      { id: 'promo', name: 'Promo video' },
      { id: 'testimonial', name: 'Testimonial' },
    ],
  },
  {
    id: 'ecommerce',
    name: 'E-commerce',
    description: 'Product cards and catalogue visuals',
    subcategories: [
      { id: 'product', name: 'Product card' },
      { id: 'showcase', name: 'Product showcase video' },
    ],
  },
  {
    id: 'events',
    name: 'Events',
    description: 'Banners, invitations and countdowns',
    subcategories: [
      { id: 'banner', name: 'Event banner' },
      { id: 'countdown', name: 'Countdown' },
      { id: 'speaker', name: 'Speaker card' },
    ],
  },
  {
    id: 'documents',
    name: 'Documents',
    description: 'Printable certificates, badges and tickets (PDF)',
    subcategories: [
      { id: 'certificate', name: 'Certificate' },
      { id: 'badge', name: 'Badge' },
    ],
  },
  {
    id: 'web',
    name: 'Web and blog',
    description: 'Open Graph images, thumbnails and blog headers',
    subcategories: [
      { id: 'og-image', name: 'Open Graph image' },
      { id: 'thumbnail', name: 'Video thumbnail' },
      { id: 'blog-header', name: 'Blog header' },
    ],
  },
  {
    id: 'video-branding',
    name: 'Video branding',
    description: 'Intros, outros and lower thirds',
    subcategories: [
      { id: 'intro', name: 'Intro' },
      { id: 'lower-third', name: 'Lower third' },
      { id: 'outro', name: 'Outro' },
    ],
  },
];

export const CATEGORY_IDS: readonly string[] = TEMPLATE_CATEGORIES.map((c) => c.id);

export function findCategory(id: string): TemplateCategory | undefined {
  return TEMPLATE_CATEGORIES.find((c) => c.id === id);
}

/**
 * Why a category pair is not valid, or null. `requireMain` (publishing) refuses a missing main
 * category; saving a draft allows none yet.
 */
export function categoryProblem(categoryId: string | null | undefined, subcategoryId: string | null | undefined, requireMain: boolean): string | null {
  if (!categoryId) {
    if (subcategoryId) return `subcategory "${subcategoryId}" needs its main category (categoryId)`;
    return requireMain ? 'a main category (categoryId) is required to publish' : null;
  }
  const main = findCategory(categoryId);
  if (!main) return `unknown category "${categoryId}"; categories: ${CATEGORY_IDS.join(', ')}`;
  if (subcategoryId && !main.subcategories.some((s) => s.id === subcategoryId)) {
    return `subcategory "${subcategoryId}" is not in category "${categoryId}"; its subcategories: ${main.subcategories.map((s) => s.id).join(', ')}`;
  }
  return null;
}
