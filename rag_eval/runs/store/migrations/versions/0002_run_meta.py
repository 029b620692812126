"""A run's free-form metadata (what kind of run, its source).

Revision ID: 0002
Revises: 0001
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("runs", sa.Column("meta_json", sa.Text))


def downgrade() -> None:
    op.drop_column("runs", "meta_json")
