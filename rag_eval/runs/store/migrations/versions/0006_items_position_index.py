"""A run's items in dataset order from the index alone, without sorting a large run's rows.

Revision ID: 0006
Revises: 0005
"""

from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("items_position", "items", ["run_id", "position", "item_id"])


def downgrade() -> None:
    op.drop_index("items_position", "items")
