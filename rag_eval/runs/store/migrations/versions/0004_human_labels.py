"""Human label sets (rag_eval.labels): append-only, one row per save.

Revision ID: 0004
Revises: 0003
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "human_labels",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), primary_key=True, autoincrement=True),
        sa.Column("run_id", sa.Text, nullable=False),
        sa.Column("item_id", sa.Text, nullable=False),
        sa.Column("reviewer", sa.Text, nullable=False),
        sa.Column("created_at", sa.Text, nullable=False),
        sa.Column("record_json", sa.Text, nullable=False),
        sqlite_autoincrement=True,
    )
    op.create_index("human_labels_item", "human_labels", ["run_id", "item_id", "reviewer"])


def downgrade() -> None:
    op.drop_table("human_labels")
