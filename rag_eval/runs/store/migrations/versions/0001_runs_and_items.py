"""Runs and their items.

Revision ID: 0001
Revises:
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "runs",
        sa.Column("id", sa.Text, primary_key=True),
        sa.Column("name", sa.Text, nullable=False),
        sa.Column("created_at", sa.Text, nullable=False),
        sa.Column("finished_at", sa.Text),
        sa.Column("status", sa.Text, nullable=False),
        sa.Column("config_name", sa.Text, nullable=False),
        sa.Column("config_hash", sa.Text, nullable=False),
        sa.Column("config_json", sa.Text, nullable=False),
        sa.Column("collection", sa.Text),
        sa.Column("dataset_path", sa.Text),
        sa.Column("dataset_fingerprint", sa.Text),
        sa.Column("n_items", sa.Integer, nullable=False, server_default="0"),
        sa.Column("summary_json", sa.Text),
        sa.Column("error", sa.Text),
    )
    op.create_index("runs_created", "runs", ["created_at"])
    op.create_index("runs_config", "runs", ["config_hash"])
    op.create_table(
        "items",
        sa.Column("run_id", sa.Text, sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
        sa.Column("item_id", sa.Text, nullable=False),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("status", sa.Text, nullable=False),
        sa.Column("error", sa.Text),
        sa.Column("question", sa.Text),
        sa.Column("record_json", sa.Text, nullable=False),
        sa.Column("updated_at", sa.Text, nullable=False),
        sa.PrimaryKeyConstraint("run_id", "item_id"),
    )
    op.create_index("items_status", "items", ["run_id", "status"])


def downgrade() -> None:
    op.drop_table("items")
    op.drop_table("runs")
