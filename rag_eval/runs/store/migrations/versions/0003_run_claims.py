"""Resume claims: the process holding a running run, and its heartbeat.

Revision ID: 0003
Revises: 0002
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("runs", sa.Column("owner", sa.Text))
    op.add_column("runs", sa.Column("heartbeat_at", sa.Text))


def downgrade() -> None:
    op.drop_column("runs", "heartbeat_at")
    op.drop_column("runs", "owner")
