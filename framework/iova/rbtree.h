/* SPDX-License-Identifier: MIT */
/*
 * rbtree -- a small intrusive red-black tree for the IOVA slow path.
 *
 * Shaped like the kernel's lib/rbtree.c interface (the caller embeds struct rb_node, finds
 * the insertion point itself, links the node, then asks for rebalancing) because the IOVA
 * allocator depends on that shape: it inserts starting from a node it already holds and walks
 * neighbours with rb_prev()/rb_next(). Written from the textbook algorithm (CLRS ch. 13),
 * with parent pointers and an explicit colour field; no locking (the caller's lock covers it).
 */
#ifndef IOMMULAB_IOVA_RBTREE_H
#define IOMMULAB_IOVA_RBTREE_H

#include <stdbool.h>
#include <stddef.h>

struct rb_node {
	struct rb_node *parent;
	struct rb_node *left;
	struct rb_node *right;
	bool red;
};

struct rb_root {
	struct rb_node *node;
};

#define rb_entry(ptr, type, member) ((type *)((char *)(ptr)-offsetof(type, member)))

/* Hang node at *link (a child slot of parent, or &root->node with parent NULL). */
static inline void rb_link_node(struct rb_node *node, struct rb_node *parent, struct rb_node **link)
{
	node->parent = parent;
	node->left = NULL;
	node->right = NULL;
	node->red = true;
	*link = node;
}

/* Restore the red-black properties after rb_link_node(). */
void rb_insert_color(struct rb_node *node, struct rb_root *root);
/* Unlink node and rebalance. */
void rb_erase(struct rb_node *node, struct rb_root *root);

struct rb_node *rb_first(const struct rb_root *root);
struct rb_node *rb_last(const struct rb_root *root);
struct rb_node *rb_next(const struct rb_node *node);
struct rb_node *rb_prev(const struct rb_node *node);

/*
 * Check the structural invariants: parent links agree with child links, the root is black,
 * no red node has a red child, every root-to-leaf path has the same number of black nodes.
 * Returns that black height (>= 0), or -1 on a violation. O(n); for tests and self-checks.
 */
int rb_check(const struct rb_root *root);

#endif /* IOMMULAB_IOVA_RBTREE_H */
