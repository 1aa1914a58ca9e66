/**
 * Test data shared by the interface E tests.
 */
const AUTHORS: Record<string, {id: string; specialty: string; country_of_practice: string; zipcode: string; post_badge: boolean; comment_badge: boolean}> = {
  'doc-1': {id: 'doc-1', specialty: 'Cardiology', country_of_practice: 'US', zipcode: '02139', post_badge: true, comment_badge: true},
  'doc-2': {id: 'doc-2', specialty: 'Endocrinology', country_of_practice: 'GB', zipcode: 'SW1A 1AA', post_badge: false, comment_badge: true},
  'doc-3': {id: 'doc-3', specialty: 'Emergency Medicine', country_of_practice: 'CA', zipcode: 'K1A 0B1', post_badge: false, comment_badge: false},
  'doc-4': {id: 'doc-4', specialty: 'Neurology', country_of_practice: 'DE', zipcode: '10115', post_badge: true, comment_badge: false},
}
export const author = (id: string) => AUTHORS[id]!

/**
 * A corpus small enough to count by hand. The window is the year 2025, both ends inclusive.
 * Tokens are what FTS5's unicode61 tokenizer makes: runs of letters and digits, case folded.
 */
export const CORPUS = [
  {
    post: {
      id: 1,
      author: author('doc-1'),
      published_at: '2025-03-01T10:00:00.250Z',
      rating: 4.25,
      iconsult: true,
      solved_at: '2025-03-02T11:00:00Z',
      // "chest pain": title 1; content CHEST PAIN, Chest-pain, chest pain = 3 (Painful chest: no)
      // "Pain": title 1; content PAIN, pain, pain = 3 (Painful: no)
      title: 'Chest pain after exercise',
      content: 'CHEST PAIN again. Chest-pain or chest pain? Painful chest.',
      comments: [
        // metformin 2 (XR is its own word)
        {id: 11, author: author('doc-2'), published_at: '2025-03-02T08:00:00Z', content: 'Metformin first, then metformin XR.', helpful_count: 3},
        // outside the window: counts for nothing
        {id: 12, author: author('doc-3'), published_at: '2026-01-01T00:00:00Z', content: 'chest pain resolved with metformin', helpful_count: 0},
      ],
    },
  },
  {
    post: {
      id: 2,
      author: author('doc-2'),
      published_at: '2025-06-15T12:00:00Z',
      rating: 3,
      iconsult: false,
      solved_at: null,
      // no whole-word match at all: metforminXR, painkillers
      title: 'Diabetes update',
      content: 'Nothing relevant: metforminXR and painkillers.',
      comments: [
        // matched only through this comment: chest pain 1, Pain 1, metformin 1
        {id: 21, author: author('doc-1'), published_at: '2025-06-16T09:30:00Z', content: 'Chest pain in a diabetic on METFORMIN.', helpful_count: 7},
      ],
    },
  },
  {
    post: {
      id: 3,
      author: author('doc-3'),
      published_at: '2024-11-01T00:00:00Z',
      rating: 0,
      iconsult: false,
      solved_at: null,
      // outside the window: its own words count for nothing
      title: 'Chest pain',
      content: 'pain pain',
      comments: [
        {id: 31, author: author('doc-1'), published_at: '2025-02-01T00:00:00Z', content: 'Great point.', helpful_count: 1},
        // inside the window: Pain 1
        {id: 32, author: author('doc-2'), published_at: '2025-02-02T00:00:00Z', content: 'pain', helpful_count: 0},
      ],
    },
  },
  {
    post: {
      id: 4,
      author: author('doc-4'),
      published_at: '2025-12-31T23:59:59Z',
      rating: '4.5',
      iconsult: true,
      solved_at: null,
      // FTS5 query syntax, to be searched literally
      title: 'He said "stop" (now) - OR * NOT ]]> end',
      content: 'Use "quotes" carefully: NEAR(a b) and OR; star* here, a -b.',
      comments: [],
    },
  },
]
