/* SPDX-License-Identifier: MIT */
/* rbtree -- red-black tree insert/erase rebalancing and in-order neighbours (see rbtree.h). */
#include "iova/rbtree.h"

static bool is_red(const struct rb_node *n)
{
	return n && n->red; /* NULL leaves are black */
}

/* Put v where u hangs (v may be NULL). */
static void rb_replace_child(struct rb_root *root, struct rb_node *u, struct rb_node *v)
{
	if (!u->parent)
		root->node = v;
	else if (u == u->parent->left)
		u->parent->left = v;
	else
		u->parent->right = v;
	if (v)
		v->parent = u->parent;
}

static void rb_rotate_left(struct rb_root *root, struct rb_node *x)
{
	struct rb_node *y = x->right;

	x->right = y->left;
	if (y->left)
		y->left->parent = x;
	rb_replace_child(root, x, y);
	y->left = x;
	x->parent = y;
}

static void rb_rotate_right(struct rb_root *root, struct rb_node *x)
{
	struct rb_node *y = x->left;

	x->left = y->right;
	if (y->right)
		y->right->parent = x;
	rb_replace_child(root, x, y);
	y->right = x;
	x->parent = y;
}

void rb_insert_color(struct rb_node *node, struct rb_root *root)
{
	struct rb_node *p, *g, *u;

	while ((p = node->parent) && p->red) {
		g = p->parent; /* exists: a red node is never the root */
		if (p == g->left) {
			u = g->right;
			if (is_red(u)) {
				/* Recolour and push the violation two levels up. */
				p->red = false;
				u->red = false;
				g->red = true;
				node = g;
				continue;
			}
			if (node == p->right) {
				rb_rotate_left(root, p);
				node = p;
				p = node->parent;
			}
			p->red = false;
			g->red = true;
			rb_rotate_right(root, g);
		} else {
			u = g->left;
			if (is_red(u)) {
				p->red = false;
				u->red = false;
				g->red = true;
				node = g;
				continue;
			}
			if (node == p->left) {
				rb_rotate_right(root, p);
				node = p;
				p = node->parent;
			}
			p->red = false;
			g->red = true;
			rb_rotate_left(root, g);
		}
	}
	root->node->red = false;
}

/*
 * x (possibly NULL, hence the explicit parent) carries an extra black after an erase; move it
 * up or absorb it with rotations until the black heights agree again.
 */
static void rb_erase_fixup(struct rb_root *root, struct rb_node *x, struct rb_node *parent)
{
	struct rb_node *w;

	while (x != root->node && !is_red(x)) {
		if (x == parent->left) {
			w = parent->right; /* non-NULL: x's side is one black short */
			if (w->red) {
				w->red = false;
				parent->red = true;
				rb_rotate_left(root, parent);
				w = parent->right;
			}
			if (!is_red(w->left) && !is_red(w->right)) {
				w->red = true;
				x = parent;
				parent = x->parent;
				continue;
			}
			if (!is_red(w->right)) {
				w->left->red = false;
				w->red = true;
				rb_rotate_right(root, w);
				w = parent->right;
			}
			w->red = parent->red;
			parent->red = false;
			w->right->red = false;
			rb_rotate_left(root, parent);
		} else {
			w = parent->left;
			if (w->red) {
				w->red = false;
				parent->red = true;
				rb_rotate_right(root, parent);
				w = parent->left;
			}
			if (!is_red(w->left) && !is_red(w->right)) {
				w->red = true;
				x = parent;
				parent = x->parent;
				continue;
			}
			if (!is_red(w->left)) {
				w->right->red = false;
				w->red = true;
				rb_rotate_left(root, w);
				w = parent->left;
			}
			w->red = parent->red;
			parent->red = false;
			w->left->red = false;
			rb_rotate_right(root, parent);
		}
		x = root->node;
		break;
	}
	if (x)
		x->red = false;
}

void rb_erase(struct rb_node *z, struct rb_root *root)
{
	struct rb_node *x, *x_parent, *y;
	bool removed_red = z->red;

	if (!z->left) {
		x = z->right;
		x_parent = z->parent;
		rb_replace_child(root, z, x);
	} else if (!z->right) {
		x = z->left;
		x_parent = z->parent;
		rb_replace_child(root, z, x);
	} else {
		/* Two children: z's successor y (no left child) takes z's place and colour. */
		y = z->right;
		while (y->left)
			y = y->left;
		removed_red = y->red;
		x = y->right;
		if (y->parent == z) {
			x_parent = y;
		} else {
			x_parent = y->parent;
			rb_replace_child(root, y, x);
			y->right = z->right;
			y->right->parent = y;
		}
		rb_replace_child(root, z, y);
		y->left = z->left;
		y->left->parent = y;
		y->red = z->red;
	}
	if (!removed_red)
		rb_erase_fixup(root, x, x_parent);
}

struct rb_node *rb_first(const struct rb_root *root)
{
	struct rb_node *n = root->node;

	while (n && n->left)
		n = n->left;
	return n;
}

struct rb_node *rb_last(const struct rb_root *root)
{
	struct rb_node *n = root->node;

	while (n && n->right)
		n = n->right;
	return n;
}

struct rb_node *rb_next(const struct rb_node *node)
{
	const struct rb_node *n = node;

	if (n->right) {
		n = n->right;
		while (n->left)
			n = n->left;
		return (struct rb_node *)n;
	}
	while (n->parent && n == n->parent->right)
		n = n->parent;
	return n->parent;
}

struct rb_node *rb_prev(const struct rb_node *node)
{
	const struct rb_node *n = node;

	if (n->left) {
		n = n->left;
		while (n->right)
			n = n->right;
		return (struct rb_node *)n;
	}
	while (n->parent && n == n->parent->left)
		n = n->parent;
	return n->parent;
}

static int rb_check_subtree(const struct rb_node *n)
{
	int lh, rh;

	if (!n)
		return 0;
	if ((n->left && n->left->parent != n) || (n->right && n->right->parent != n))
		return -1;
	if (n->red && (is_red(n->left) || is_red(n->right)))
		return -1;
	lh = rb_check_subtree(n->left);
	rh = rb_check_subtree(n->right);
	if (lh < 0 || rh < 0 || lh != rh)
		return -1;
	return lh + !n->red;
}

int rb_check(const struct rb_root *root)
{
	if (!root->node)
		return 0;
	if (root->node->parent || root->node->red)
		return -1;
	return rb_check_subtree(root->node);
}
