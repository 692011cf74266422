/* SPDX-License-Identifier: MIT */
/*
 * Line diffs: Myers' O(ND) algorithm in linear space (E. W. Myers, "An O(ND) Difference
 * Algorithm and Its Variations", Algorithmica 1(2), 1986, section 4b), as libxdiff and GNU diff
 * run it:
 *
 * 1. Both sides are cut into lines ('\n' included), the common prefix and suffix set aside, and
 *    the lines in between interned to integers (XXH3-64 into an open-addressing table, equal
 *    bytes checked), so that the inner loop compares two uint32_t.
 * 2. diff_region() trims the region's own common prefix and suffix, marks a side that is empty
 *    as wholly added or removed, else finds a point on a shortest path (middle_snake(): the
 *    forward and backward greedy searches, one difference at a time, until they overlap) and
 *    recurses on both halves. Each half has at most half the differences, so the depth is
 *    O(log D); the V arrays (one per direction, indexed by diagonal) are shared.
 * 3. A region whose search passes HEAL_DIFF_D_MAX differences, or a diff whose total work passes
 *    HEAL_DIFF_WORK_MAX steps, is marked wholly replaced: the script stays correct, only longer.
 *
 * The result is a list of changes (at old line a, remove del lines; at new line b, add ins),
 * from which diff_format.c prints unified diffs and heal_diff_lines() lists the lines.
 */
#include "heal/diff.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "core/util.h"
#include "repair/diff-internal.h"

static int split_lines(struct diff_side *s, const char *text)
{
        size_t len = text ? strlen(text) : 0, n = 0;

        if (len > HEAL_DIFF_FILE_MAX_BYTES)
                return -EFBIG;
        for (const char *p = text; p && (p = memchr(p, '\n', len - (size_t)(p - text))); p++)
                n++;
        n += len && text[len - 1] != '\n';
        s->v = n ? calloc(n, sizeof(*s->v)) : NULL;
        if (n && !s->v)
                return -ENOMEM;
        s->n = 0;
        for (size_t i = 0; i < len;) {
                const char *nl = memchr(text + i, '\n', len - i);
                size_t end = nl ? (size_t)(nl - text) + 1 : len;

                s->v[s->n++] = (struct diff_line_ref){ text + i, end - i };
                i = end;
        }
        return 0;
}

static bool same(const struct diff_line_ref *x, const struct diff_line_ref *y)
{
        return x->len == y->len && memcmp(x->s, y->s, x->len) == 0;
}

/* The state of one diff's search: interned lines, V arrays, flags, work done. */
struct myers {
        uint32_t *a, *b;    /* interned lines of the middle regions */
        unsigned char *del; /* per line of a: removed */
        unsigned char *ins; /* per line of b: added */
        int32_t *vf, *vb;   /* furthest x per diagonal k (forward), least x (backward) */
        long voff;          /* index of diagonal 0 in vf and vb */
        unsigned long work; /* steps so far */
};

struct intern {
        uint32_t *slots; /* 0 empty, else representative index + 1 */
        uint64_t *hash;  /* per representative */
        const struct diff_line_ref **rep;
        size_t mask, n;
};

static uint32_t intern_one(struct intern *t, const struct diff_line_ref *l)
{
        uint64_t h = XXH3_64bits(l->s, l->len);
        size_t i = (size_t)h & t->mask;

        for (; t->slots[i]; i = (i + 1) & t->mask) {
                uint32_t r = t->slots[i] - 1;

                if (t->hash[r] == h && same(t->rep[r], l))
                        return r;
        }
        t->rep[t->n] = l;
        t->hash[t->n] = h;
        t->slots[i] = (uint32_t)++t->n;
        return (uint32_t)(t->n - 1);
}

/* Lines [from, from + na) of @A and [from, from + nb) of @B as integers in m->a and m->b. */
static int intern_lines(struct myers *m, const struct diff_side *A, const struct diff_side *B,
                        size_t from, size_t na, size_t nb)
{
        struct intern t = { 0 };
        size_t cap = 16;
        int r = -ENOMEM;

        while (cap < 2 * (na + nb))
                cap <<= 1;
        t.mask = cap - 1;
        t.slots = calloc(cap, sizeof(*t.slots));
        t.hash = malloc((na + nb) * sizeof(*t.hash));
        t.rep = malloc((na + nb) * sizeof(*t.rep));
        m->a = malloc((na + 1) * sizeof(*m->a));
        m->b = malloc((nb + 1) * sizeof(*m->b));
        if (t.slots && t.hash && t.rep && m->a && m->b) {
                for (size_t i = 0; i < na; i++)
                        m->a[i] = intern_one(&t, &A->v[from + i]);
                for (size_t i = 0; i < nb; i++)
                        m->b[i] = intern_one(&t, &B->v[from + i]);
                r = 0;
        }
        free(t.slots);
        free(t.hash);
        free(t.rep);
        return r;
}

/* The region [x0, x1) x [y0, y1): all of a removed, all of b added. */
static void mark_all(struct myers *m, long x0, long x1, long y0, long y1)
{
        if (x1 > x0)
                memset(m->del + x0, 1, (size_t)(x1 - x0));
        if (y1 > y0)
                memset(m->ins + y0, 1, (size_t)(y1 - y0));
}

/* A middle-snake search of the region [x0, x1) x [y0, y1): the diagonals k = x - y it spans,
 * and those the forward and backward searches have reached. */
struct search {
        long x0, y0, x1, y1; /* the region */
        long dmin, dmax;     /* diagonals the region spans */
        long fmin, fmax, bmin, bmax;
        bool odd;
};

/* One more difference forward: widen [fmin, fmax] by one each way while inside [dmin, dmax]
 * (-1 sentinels beyond), extend each diagonal and follow its snake. True, with the point, when
 * a forward path reaches a backward one (odd delta only: the total is then 2ec - 1). */
static bool forward(struct myers *m, struct search *s, long *ret_x, long *ret_y)
{
        int32_t *vf = m->vf + m->voff, *vb = m->vb + m->voff;

        if (s->fmin > s->dmin)
                vf[--s->fmin - 1] = -1;
        else
                ++s->fmin;
        if (s->fmax < s->dmax)
                vf[++s->fmax + 1] = -1;
        else
                --s->fmax;
        for (long k = s->fmax; k >= s->fmin; k -= 2) {
                long x = vf[k - 1] >= vf[k + 1] ? vf[k - 1] + 1 : vf[k + 1], y = x - k, x0 = x;

                while (x < s->x1 && y < s->y1 && m->a[x] == m->b[y])
                        x++, y++;
                m->work += (unsigned long)(x - x0) + 1;
                vf[k] = (int32_t)x;
                if (s->odd && s->bmin <= k && k <= s->bmax && vb[k] <= x) {
                        *ret_x = x, *ret_y = y;
                        return true;
                }
        }
        return false;
}

/* The same from the end (INT32_MAX sentinels); overlaps count for even deltas (2ec). */
static bool backward(struct myers *m, struct search *s, long *ret_x, long *ret_y)
{
        int32_t *vf = m->vf + m->voff, *vb = m->vb + m->voff;

        if (s->bmin > s->dmin)
                vb[--s->bmin - 1] = INT32_MAX;
        else
                ++s->bmin;
        if (s->bmax < s->dmax)
                vb[++s->bmax + 1] = INT32_MAX;
        else
                --s->bmax;
        for (long k = s->bmax; k >= s->bmin; k -= 2) {
                long x = vb[k - 1] < vb[k + 1] ? vb[k - 1] : vb[k + 1] - 1, y = x - k, x0 = x;

                while (x > s->x0 && y > s->y0 && m->a[x - 1] == m->b[y - 1])
                        x--, y--;
                m->work += (unsigned long)(x0 - x) + 1;
                vb[k] = (int32_t)x;
                if (!s->odd && s->fmin <= k && k <= s->fmax && x <= vf[k]) {
                        *ret_x = x, *ret_y = y;
                        return true;
                }
        }
        return false;
}

/* A point on a shortest path through the region (both sides non-empty, ends differing), or
 * false when the search passes the limits. */
static bool middle_snake(struct myers *m, long x0, long x1, long y0, long y1, long *ret_x,
                         long *ret_y)
{
        long fmid = x0 - y0, bmid = x1 - y1;
        struct search s = { .x0 = x0,
                            .y0 = y0,
                            .x1 = x1,
                            .y1 = y1,
                            .dmin = x0 - y1,
                            .dmax = x1 - y0,
                            .fmin = fmid,
                            .fmax = fmid,
                            .bmin = bmid,
                            .bmax = bmid,
                            .odd = ((fmid - bmid) & 1) != 0 };

        m->vf[m->voff + fmid] = (int32_t)x0;
        m->vb[m->voff + bmid] = (int32_t)x1;
        for (long ec = 1; 2 * ec - 1 <= HEAL_DIFF_D_MAX && m->work <= HEAL_DIFF_WORK_MAX; ec++) {
                if (forward(m, &s, ret_x, ret_y) || backward(m, &s, ret_x, ret_y))
                        return true;
        }
        return false;
}

static void diff_region(struct myers *m, long x0, long x1, long y0, long y1)
{
        long x, y;

        while (x0 < x1 && y0 < y1 && m->a[x0] == m->b[y0])
                x0++, y0++;
        while (x0 < x1 && y0 < y1 && m->a[x1 - 1] == m->b[y1 - 1])
                x1--, y1--;
        if (x0 == x1 || y0 == y1) {
                mark_all(m, x0, x1, y0, y1);
        } else if (!middle_snake(m, x0, x1, y0, y1, &x, &y)) {
                mark_all(m, x0, x1, y0, y1);
        } else {
                diff_region(m, x0, x, y0, y);
                diff_region(m, x, x1, y, y1);
        }
}

static int add_change(struct diff *d, size_t a, size_t b, size_t del, size_t ins)
{
        struct diff_change *grown;

        if (d->n_changes % 64 == 0) {
                grown = realloc(d->changes, (d->n_changes + 64) * sizeof(*grown));
                if (!grown)
                        return -ENOMEM;
                d->changes = grown;
        }
        d->changes[d->n_changes++] = (struct diff_change){ a, b, del, ins };
        d->added += ins;
        d->removed += del;
        return 0;
}

/* The flags of the middle regions (which start at line @from of both sides) as changes. */
static int collect(struct diff *d, const struct myers *m, size_t from, size_t na, size_t nb)
{
        size_t i = 0, j = 0;

        while (i < na || j < nb) {
                size_t del = 0, ins = 0;

                while (i + del < na && m->del[i + del])
                        del++;
                while (j + ins < nb && m->ins[j + ins])
                        ins++;
                if (del || ins) {
                        if (add_change(d, from + i, from + j, del, ins) < 0)
                                return -ENOMEM;
                        i += del, j += ins;
                } else {
                        i++, j++; /* an equal line */
                }
        }
        return 0;
}

static int search(struct diff *d, size_t from, size_t na, size_t nb)
{
        struct myers m = { 0 };
        int r = intern_lines(&m, &d->a, &d->b, from, na, nb);

        if (r == 0) {
                m.del = calloc(na + 1, 1);
                m.ins = calloc(nb + 1, 1);
                m.vf = malloc((na + nb + 3) * sizeof(*m.vf));
                m.vb = malloc((na + nb + 3) * sizeof(*m.vb));
                m.voff = (long)nb + 1;
                if (!m.del || !m.ins || !m.vf || !m.vb)
                        r = -ENOMEM;
        }
        if (r == 0) {
                diff_region(&m, 0, (long)na, 0, (long)nb);
                r = collect(d, &m, from, na, nb);
        }
        free(m.a);
        free(m.b);
        free(m.del);
        free(m.ins);
        free(m.vf);
        free(m.vb);
        return r;
}

int diff_compute(struct diff *d, const char *before, const char *after)
{
        size_t pre = 0, suf = 0;
        int r;

        *d = (struct diff){ 0 };
        r = split_lines(&d->a, before);
        if (r == 0)
                r = split_lines(&d->b, after);
        if (r < 0) {
                diff_release(d);
                return r;
        }
        while (pre < d->a.n && pre < d->b.n && same(&d->a.v[pre], &d->b.v[pre]))
                pre++;
        while (suf < d->a.n - pre && suf < d->b.n - pre &&
               same(&d->a.v[d->a.n - 1 - suf], &d->b.v[d->b.n - 1 - suf]))
                suf++;
        if (pre + suf == d->a.n || pre + suf == d->b.n)
                r = d->a.n == d->b.n
                            ? 0
                            : add_change(d, pre, pre, d->a.n - pre - suf, d->b.n - pre - suf);
        else
                r = search(d, pre, d->a.n - pre - suf, d->b.n - pre - suf);
        if (r < 0)
                diff_release(d);
        return r;
}

void diff_release(struct diff *d)
{
        free(d->a.v);
        free(d->b.v);
        free(d->changes);
        *d = (struct diff){ 0 };
}
