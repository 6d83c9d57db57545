// A Swift program that imports FoundationEssentials only (what orchctl links) and does nothing.
import FoundationEssentials
