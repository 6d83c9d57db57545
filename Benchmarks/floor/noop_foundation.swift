// A Swift program that imports Foundation and does nothing.
import Foundation
