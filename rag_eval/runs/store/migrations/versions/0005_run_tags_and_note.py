"""A run's tags and free-text note.

Revision ID: 0005
Revises: 0004
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("runs", sa.Column("tags_json", sa.Text))
    op.add_column("runs", sa.Column("note", sa.Text))


def downgrade() -> None:
    op.drop_column("runs", "note")
    op.drop_column("runs", "tags_json")
